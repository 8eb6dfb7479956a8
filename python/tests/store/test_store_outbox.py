"""Runs every case of tests/conformance/outbox.json through mintid.store.Outbox on
SQLite, PostgreSQL and MariaDB."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import pytest

from mintid import RelayPolicy
from mintid.errors import MintidError
from mintid.store import ClaimedMessage, Database, Outbox, OutboxMessage, RelayReport
from store.store_support import (
    SYNC,
    Faults,
    Kit,
    ManualStoreClock,
    Server,
    case_id,
    cases,
    check_fields,
    faulty,
    unknown,
)


class RollBackError(Exception):
    """Ends a business transaction with a rollback."""


class SendFailedError(Exception):
    """A scripted send failure."""


def policy_of(spec: dict[str, Any]) -> RelayPolicy:
    return RelayPolicy(
        int(spec["batch_size"]),
        int(spec["claim_millis"]),
        base_backoff_millis=int(spec["base_backoff_millis"]),
        max_backoff_millis=int(spec["max_backoff_millis"]),
        jitter_percent=int(spec["jitter_percent"]),
        max_attempts=int(spec["max_attempts"]),
    )


def error_text(spec: Any) -> str:
    if isinstance(spec, str):
        return spec
    if isinstance(spec, dict) and set(spec) == {"fill"}:
        return str(spec["fill"]["text"]) * int(spec["fill"]["length"])
    raise unknown("error text", spec)


def enqueue(outbox: Outbox, database: Database, message: OutboxMessage, way: str) -> Any:
    if way not in ("commit", "rollback"):
        raise unknown("way", way)
    result: Any = ""
    try:
        with database.transaction(write=True) as raw:
            result = outbox.enqueue(raw, message)
            if way == "rollback":
                raise RollBackError
    except RollBackError:
        pass
    except MintidError as error:
        return {"error": error.code}
    return result


def report_of(report: Any) -> dict[str, str]:
    fields = ("sent", "retried", "dead", "given_up", "claim_lost", "released", "mark_failed")
    return {name: str(getattr(report, name)) for name in fields}


def sent_counts(sent: list[int]) -> dict[str, str]:
    return {"sent": str(len(set(sent))), "sent_twice": str(len(sent) - len(set(sent)))}


def concurrent_relays(
    kit: Kit, make: Callable[[], Database], policy: RelayPolicy, messages: int, relays: int
) -> dict[str, str]:
    database = make()
    outbox = kit.outbox(database, policy)
    for n in range(messages):
        with database.connection() as raw:
            outbox.enqueue(raw, OutboxMessage(n + 1, "event", f"e-{n}", b"{}"))
    sent: list[int] = []
    barrier = threading.Barrier(relays)

    def relay() -> None:
        own = make()
        try:
            barrier.wait()
            kit.outbox(own, policy).relay(lambda message: sent.append(message.message_id))
        finally:
            own.close()

    threads = [threading.Thread(target=relay) for _ in range(relays)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return sent_counts(sent)


def slow_relays(
    kit: Kit, make: Callable[[], Database], policy: RelayPolicy, step: dict[str, Any]
) -> dict[str, str]:
    database = make()
    outbox = kit.outbox(database, policy)
    for n in range(int(step["messages"])):
        with database.connection() as raw:
            outbox.enqueue(raw, OutboxMessage(n + 1, "event", f"e-{n}", b"{}"))
    sent: list[int] = []
    pause = int(step["send_millis"]) / 1000

    def send(message: ClaimedMessage) -> None:
        time.sleep(pause)
        sent.append(message.message_id)

    def relay(after: float) -> None:
        own = make()
        try:
            time.sleep(after)
            kit.outbox(own, policy).relay(send)
        finally:
            own.close()

    threads = [
        threading.Thread(target=relay, args=(0.0,)),
        threading.Thread(target=relay, args=(int(step["second_after_millis"]) / 1000,)),
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return sent_counts(sent)


class Runner:
    """One case's outboxes, one per store kind, on one manual clock."""

    def __init__(self, kit: Kit, make: Callable[..., Database], policy: RelayPolicy) -> None:
        self.kit = kit
        self.make = make
        self.policy = policy
        self.clock = ManualStoreClock()
        self.database = make()
        self.outbox = kit.outbox(self.database, policy, clock=self.clock)
        self.found_rows_database = make(found_rows=True)
        self.found_rows = kit.outbox(self.found_rows_database, policy, clock=self.clock)

    def relay(self, step: dict[str, Any]) -> Any:
        script = list(step["sends"])
        database = self.make()
        outbox = self.kit.outbox(
            database, self.policy, clock=self.clock, draw=lambda: int(step["draw"])
        )

        faults = Faults(lose=step.get("lose_reply"))

        def send(message: ClaimedMessage) -> None:
            assert script, f"an unscripted send of message {message.message_id}"
            entry = script.pop(0)
            check_fields(entry, {"message_id", "outcome", "millis", "during", "mark_fails"})
            assert str(message.message_id) == entry["message_id"], "the send order"
            if "mark_fails" in entry:
                if entry["mark_fails"] != "other":
                    raise unknown("mark_fails", entry["mark_fails"])
                faults.failing_marks += 1
            start = self.clock.now_millis()
            for inner in entry.get("during", []):
                self.run(inner)
            self.clock.set(start + int(entry["millis"]))
            outcome = entry["outcome"]
            if outcome == "delivered":
                return
            if isinstance(outcome, dict) and set(outcome) == {"failed"}:
                raise SendFailedError(error_text(outcome["failed"]))
            raise unknown("outcome", outcome)

        try:
            with faulty(database, faults):
                report = outbox.relay(send)
        finally:
            database.close()
        assert not script, f"scripted sends never made: {script}"
        return report_of(report)

    def run(self, step: dict[str, Any]) -> None:
        do = step["do"]
        if "now" in step:
            self.clock.set(int(step["now"]))
        got: Any
        if do == "migrate":
            check_fields(step, set())
            self.database.migrate()
            got = "ok"
        elif do == "enqueue":
            check_fields(
                step, {"way", "message_id", "kind", "business_key", "payload", "now", "store"}
            )
            store = step.get("store")
            if store not in (None, "found_rows"):
                raise unknown("store", store)
            message = OutboxMessage(
                int(step["message_id"]),
                step["kind"],
                step["business_key"],
                step["payload"].encode(),
            )
            if store:
                got = enqueue(self.found_rows, self.found_rows_database, message, step["way"])
            else:
                got = enqueue(self.outbox, self.database, message, step["way"])
        elif do == "relay":
            check_fields(step, {"relay", "now", "draw", "sends", "lose_reply"})
            got = self.relay(step)
        elif do == "message":
            check_fields(step, {"kind", "business_key"})
            stored = self.outbox.load(step["kind"], step["business_key"])
            got = (
                None
                if stored is None
                else {
                    "status": stored.status,
                    "attempts": str(stored.attempts),
                    "next_attempt": str(stored.next_attempt_millis),
                    "last_error": stored.last_error,
                }
            )
        elif do == "cleanup":
            check_fields(step, {"sent_before", "batch_size"})
            deleted = self.outbox.cleanup(int(step["sent_before"]), int(step["batch_size"]))
            got = {"deleted": str(deleted)}
        elif do == "concurrent_relays":
            check_fields(step, {"messages", "relays"})
            got = concurrent_relays(
                self.kit, self.make, self.policy, int(step["messages"]), int(step["relays"])
            )
        elif do == "slow_relays":
            check_fields(step, {"messages", "send_millis", "second_after_millis"})
            got = slow_relays(self.kit, self.make, self.policy, step)
        else:
            raise unknown("step", do)
        assert got == step["expect"], f"{do} {step.get('relay', '')}"


def run_case(server: Server, case: dict[str, Any], kit: Kit = SYNC) -> None:
    if case["op"] != "scenario" or case["clock"] not in ("manual", "system"):
        raise unknown("case shape", (case["op"], case["clock"]))
    with kit.databases(server) as make:
        runner = Runner(kit, make, policy_of(case["policy"]))
        for step in case["steps"]:
            runner.run(step)


@pytest.mark.parametrize("case", cases("outbox.json"), ids=case_id)
def test_outbox_scenario(server: Server, case: dict[str, Any]) -> None:
    run_case(server, case)


@pytest.mark.parametrize("flavour", ["sync", "async"])
def test_relay_takes_a_fresh_connection_after_a_server_side_kill(
    server: Server, flavour: str
) -> None:
    """The relay holds one connection from send to send: when the server ends
    that session (pg_terminate_backend, KILL) while the database stays up, the
    core retries the next statement, which runs on a fresh connection: every
    message is sent once and marked, and the run goes on.
    """
    if server.dialect == "sqlite":
        pytest.skip("SQLite has no server session to end")
    from store.async_support import AsyncKit

    kit = SYNC if flavour == "sync" else AsyncKit()
    policy = RelayPolicy(10, 60_000)
    with kit.databases(server) as make:
        database = make()
        database.migrate()
        outbox = kit.outbox(database, policy)
        for n in range(3):
            with database.connection() as raw:
                outbox.enqueue(raw, OutboxMessage(n + 1, "event", f"e-{n}", b"{}"))
        sent: list[int] = []

        def send(message: ClaimedMessage) -> None:
            if not sent:
                server.kill_connections()  # the relay's own session among them
            sent.append(message.message_id)

        report = kit.outbox(make(), policy).relay(send)
        assert sent == [1, 2, 3]
        assert report_of(report) == report_of(RelayReport(sent=3))
        # The kill ended the idle sessions of this test's own pool too: read on a new one.
        check = kit.outbox(make(), policy)
        for n in range(3):
            stored = check.load("event", f"e-{n}")
            assert stored is not None and stored.status == "sent"
