"""Runs every case of tests/conformance/outbox.json through mintid.store.Outbox on
SQLite, PostgreSQL and MariaDB."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import pytest

from mintid import RelayPolicy
from mintid.errors import MintidError
from mintid.store import ClaimedMessage, Database, Outbox, OutboxBatch, OutboxMessage
from store.store_support import (
    ManualStoreClock,
    Server,
    case_id,
    cases,
    check_fields,
    databases,
    unknown,
)


class RollBackError(Exception):
    """Ends a business transaction with a rollback."""


def policy_of(spec: dict[str, Any]) -> RelayPolicy:
    return RelayPolicy(
        int(spec["batch_size"]),
        int(spec["claim_millis"]),
        base_backoff_ms=int(spec["base_backoff_millis"]),
        max_backoff_ms=int(spec["max_backoff_millis"]),
        jitter_percent=int(spec["jitter_percent"]),
        max_attempts=int(spec["max_attempts"]),
    )


def enqueue(outbox: Outbox, message: OutboxMessage, way: str) -> str:
    if way not in ("commit", "rollback"):
        raise unknown("way", way)
    result = ""
    try:
        with outbox.database.transaction(write=True) as raw:
            result = outbox.enqueue(raw, message)
            if way == "rollback":
                raise RollBackError
    except RollBackError:
        pass
    return result


def send_step(outbox: Outbox, batch: OutboxBatch, step: dict[str, Any]) -> Any:
    message = next(m for m in batch.messages if m.message_id == int(step["message_id"]))
    result_of = step["outcome"]
    draw: int | None = None
    if result_of == "delivered":

        def send(_message: ClaimedMessage) -> None:
            return None

    elif isinstance(result_of, dict) and set(result_of) == {"failed", "draw"}:
        draw = int(result_of["draw"])

        def send(_message: ClaimedMessage) -> None:
            raise RuntimeError(result_of["failed"])

    else:
        raise unknown("outcome", result_of)
    try:
        result = outbox.deliver(batch, message, send, draw)
    except MintidError as error:
        return {"error": error.code}
    return {"retry": str(result)} if isinstance(result, int) else result


def concurrent_relays(
    make: Callable[[], Database], policy: RelayPolicy, messages: int, relays: int
) -> dict[str, str]:
    database = make()
    outbox = Outbox(database, policy)
    for n in range(messages):
        with database.connection() as raw:
            outbox.enqueue(raw, OutboxMessage(n + 1, "event", f"e-{n}", b"{}"))
    sent: list[int] = []
    barrier = threading.Barrier(relays)

    def relay() -> None:
        own = make()
        try:
            barrier.wait()
            Outbox(own, policy).relay(lambda message: sent.append(message.message_id))
        finally:
            own.close()

    threads = [threading.Thread(target=relay) for _ in range(relays)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return {"sent": str(len(set(sent))), "sent_twice": str(len(sent) - len(set(sent)))}


def run_case(server: Server, case: dict[str, Any]) -> None:
    if case["op"] != "scenario" or case["clock"] not in ("manual", "system"):
        raise unknown("case shape", (case["op"], case["clock"]))
    policy = policy_of(case["policy"])
    clock = ManualStoreClock()
    batches: dict[str, OutboxBatch] = {}
    with databases(server.fresh()) as make:
        outbox = Outbox(make(), policy, clock=clock)
        for index, step in enumerate(case["steps"]):
            do = step["do"]
            clock.set(int(step.get("now", 0)))
            got: Any
            if do == "migrate":
                check_fields(step, set())
                outbox.database.migrate()
                got = "ok"
            elif do == "enqueue":
                check_fields(step, {"way", "message_id", "kind", "business_key", "payload", "now"})
                message = OutboxMessage(
                    int(step["message_id"]),
                    step["kind"],
                    step["business_key"],
                    step["payload"].encode(),
                )
                got = enqueue(outbox, message, step["way"])
            elif do == "claim":
                check_fields(step, {"relay", "now", "draw"})
                batch = outbox.claim(int(step["draw"]))
                batches[step["relay"]] = batch
                got = [str(m.message_id) for m in batch.messages]
            elif do == "send":
                check_fields(step, {"relay", "message_id", "now", "outcome"})
                got = send_step(outbox, batches[step["relay"]], step)
            elif do == "message":
                check_fields(step, {"kind", "business_key"})
                stored = outbox.load(step["kind"], step["business_key"])
                got = (
                    None
                    if stored is None
                    else {
                        "status": stored.status,
                        "attempts": str(stored.attempts),
                        "next_attempt": str(stored.next_attempt_ms),
                        "last_error": stored.last_error,
                    }
                )
            elif do == "cleanup":
                check_fields(step, {"sent_before", "batch_size"})
                deleted = outbox.cleanup(int(step["sent_before"]), int(step["batch_size"]))
                got = {"deleted": str(deleted)}
            elif do == "concurrent_relays":
                check_fields(step, {"messages", "relays"})
                got = concurrent_relays(make, policy, int(step["messages"]), int(step["relays"]))
            else:
                raise unknown("step", do)
            assert got == step["expect"], f"step {index}: {do}"


@pytest.mark.parametrize("case", cases("outbox.json"), ids=case_id)
def test_outbox_scenario(server: Server, case: dict[str, Any]) -> None:
    run_case(server, case)
