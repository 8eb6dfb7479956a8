"""Runs every case of tests/conformance/idempotency.json through mintid.store on
SQLite, PostgreSQL and MariaDB."""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import pytest
from opentelemetry.trace import StatusCode

from mintid import Fingerprint, IdempotencyKey, RecordPolicy
from mintid.errors import MintidError
from mintid.store import (
    Database,
    IdempotencyStore,
    OperationError,
    RecordLease,
    RunResult,
    StoreClock,
    StoredResponse,
    StoreError,
    StoreRequest,
    StoreUnavailableError,
    SystemStoreClock,
)
from store.metrics_support import Recording
from store.metrics_support import key_of as key
from store.store_support import (
    Factory,
    Faults,
    ManualStoreClock,
    Server,
    case_id,
    cases,
    check_fields,
    databases,
    faulty,
    in_forked_child,
    marks,
    placeholder,
    scalar,
    unknown,
)

Outcome = Any


def response_of(spec: dict[str, Any]) -> StoredResponse:
    if "text" in spec:
        body = spec["text"].encode()
    elif "hex" in spec:
        body = bytes.fromhex(spec["hex"])
    elif "fill" in spec:
        body = bytes.fromhex(spec["fill"]["byte"]) * int(spec["fill"]["length"])
    else:
        raise unknown("response", spec)
    return StoredResponse(spec["content_type"], body)


def expected(value: Any) -> Any:
    """The expectation with its responses read (compared as StoredResponse)."""
    if isinstance(value, dict):
        return {
            name: response_of(item) if name == "response" and item is not None else expected(item)
            for name, item in value.items()
        }
    return value


def policy_of(spec: dict[str, Any]) -> RecordPolicy:
    return RecordPolicy(
        lease_millis=int(spec["lease_millis"]),
        retention_millis=int(spec["retention_millis"]),
        store_errors=bool(spec["store_errors"]),
        retry_after_millis=int(spec["retry_after_millis"]),
        max_wait_millis=int(spec["max_wait_millis"]),
        poll_millis=int(spec["poll_millis"]),
    )


def key_of(spec: dict[str, Any]) -> IdempotencyKey:
    return IdempotencyKey(spec["kind"], spec["scope"], spec["id"])


def shown(result: RunResult) -> dict[str, Any]:
    if result.decision == "execute":
        return {"decision": "execute", "response": result.response}
    if result.decision == "replay":
        assert result.outcome is not None
        if str(result.outcome) == "succeeded":
            return {"decision": "replay", "outcome": "succeeded", "response": result.response}
        return {"decision": "replay", "outcome": "failed", "error": result.error}
    assert result.problem is not None
    got: dict[str, Any] = {"decision": result.decision, "problem": result.problem.problem_name}
    if result.decision == "in_progress":
        got["retry_after_millis"] = str(result.retry_after_millis)
    return got


def ok(action: Callable[..., None], *args: Any) -> str:
    action(*args)
    return "ok"


def outcome_of(action: Callable[[], Any], ran: list[str] | None = None) -> Any:
    """What a request came to, in the file's terms; ``ran`` tells whether the
    operation ran (a store error after it is ``execute`` with the error's code).
    """
    try:
        return action()
    except OperationError as error:
        got: dict[str, Any] = {"decision": "execute", "error": error.message}
        # An unrecorded failure: the store's error attached to the operation's (its context).
        attached = error.__context__
        if isinstance(attached, MintidError):
            assert attached.code.startswith(("store.", "record.")), attached.code
            got["not_recorded"] = True
        return got
    except StoreError as error:
        if isinstance(error, StoreUnavailableError):
            assert isinstance(error.__cause__, Exception), "the driver's error is the cause"
        if error.problem is not None:
            return {"error": error.code, "problem": error.problem.problem_name}
        if ran:
            return {"decision": "execute", "error": error.code}
        return {"error": error.code}
    except MintidError as error:
        return {"error": error.code}


@dataclass
class Worker:
    """A database and a store over it (the async runner's: sync views of async ones)."""

    database: Database | Any
    store: IdempotencyStore | Any
    lease: RecordLease | Any = None


@dataclass
class Run:
    server: Server
    make: Factory
    case: dict[str, Any]
    clock: StoreClock
    policy: RecordPolicy
    admin: Database
    workers: dict[str, Worker] = field(default_factory=dict)
    #: The workers' databases made on the fault proxy (closed at the end).
    proxied: list[Any] = field(default_factory=list)
    #: What every worker's store records (checked against the steps at the end).
    recording: Recording = field(default_factory=Recording)

    def open(self, store: str | None, clock: StoreClock | None) -> Worker:
        """A new worker: its database (as ``store`` says: ``proxied`` is one the
        case's outage cuts) and a store over it.
        """
        if store == "unavailable":
            database = self.server.unavailable()
        elif store == "proxied" and self.server.dialect != "sqlite":
            database = self.server.at(self.server.proxied())
            self.proxied.append(database)
        else:
            database = self.make(found_rows=store == "found_rows")
        made = IdempotencyStore(database, self.policy, clock=clock, metrics=self.recording.metrics)
        return Worker(database, made)

    def worker(self, name: str, store: str | None = None) -> Worker:
        if store is not None and store not in ("found_rows", "unavailable", "proxied"):
            raise unknown("store", store)
        if store == "unavailable":
            return self.open(store, self.clock)
        made = f"{name}/{store}" if store else name
        if made not in self.workers:
            self.workers[made] = self.open(store, self.clock)
        return self.workers[made]

    def close(self) -> None:
        """Close the stores made on the fault proxy (the async runner stops its event loop here)."""
        for database in self.proxied:
            database.close()

    def reply_lost(
        self, worker: Worker, statement: str | None, faults: Faults | None = None
    ) -> Any:
        """For one step (``lose_reply``): the first ``statement`` the worker's
        executor runs is committed, and its reply lost (a closed connection);
        with ``faults``, theirs too.
        """
        faults = faults if faults is not None else Faults()
        faults.lose = statement
        return faulty(worker.database, faults)

    def request_in_child(self, step: dict[str, Any]) -> Any:
        """A ``run`` step in a forked child, on the store its worker used before the fork."""
        return self.request(step["worker"], step["way"], step)

    def key(self, step: dict[str, Any]) -> IdempotencyKey:
        return key_of(step.get("key", self.case["key"]))

    def side_effect(self, database: Database, raw: Any, key: IdempotencyKey, worker: str) -> None:
        database.execute(
            raw,
            f"INSERT INTO conformance_side_effect (scope, kind, key_id, worker) "
            f"VALUES ({marks(database, 4)})",
            (key.scope, key.kind, key.id, worker),
        )

    def request(
        self, worker_name: str, way: str, step: dict[str, Any], worker: Worker | None = None
    ) -> Any:
        """One request of a ``run`` step (its ``key``, ``fingerprint``, ``operation``…)."""
        operation = step["operation"]
        store = "proxied" if "outage_millis" in operation else step.get("store")
        worker = worker if worker is not None else self.worker(worker_name, store)
        database = worker.database
        ran: list[str] = []
        # unavailable_after_operation: the database is gone for the record's writes once
        # the operation returned (or raised).
        faults = Faults(
            unavailable_for=frozenset(("complete", "fail", "release", "renew"))
            if step.get("unavailable_after_operation")
            else frozenset()
        )

        def run(raw: Any, key: IdempotencyKey) -> Any:
            try:
                return operate(raw, key)
            finally:
                faults.unavailable = True

        def operate(raw: Any, key: IdempotencyKey) -> Any:
            ran.append(worker_name)
            self.side_effect(database, raw, key, worker_name)
            outcome = operation["outcome"]
            if outcome == "succeed":
                check_fields(
                    operation,
                    {"outcome", "response", "sleep_millis", "kill_connections", "outage_millis"},
                )
                if operation.get("kill_connections"):
                    self.server.kill_connections()
                    self.admin.close()  # the runner's own connections went too
                if "outage_millis" in operation:
                    self.server.outage(int(operation["outage_millis"]))
                time.sleep(int(operation.get("sleep_millis", "0")) / 1000)
                return response_of(operation["response"])
            if outcome == "not_a_response":
                check_fields(operation, {"outcome"})
                return {"not": "a response"}
            if outcome == "fail":
                check_fields(operation, {"outcome", "failure", "error"})
                failure = operation["failure"]
                if failure not in ("final", "retryable"):
                    raise unknown("failure", failure)
                raise OperationError(operation["error"], retryable=failure == "retryable")
            raise unknown("operation", operation)

        def request() -> Any:
            key = self.key(step)
            request = StoreRequest(
                Fingerprint(bytes.fromhex(step["fingerprint"])),
                int(step["key_created"]) if "key_created" in step else None,
            )
            if way == "run_once":

                def run_once() -> StoredResponse:
                    with database.connection() as raw:
                        return run(raw, key)  # type: ignore[no-any-return]

                return shown(worker.store.run_once(key, request, run_once))
            if way == "same_transaction":
                with database.transaction(write=True) as raw:
                    return shown(
                        worker.store.in_transaction(raw, key, request, lambda c: run(c, key))
                    )
            raise unknown("way", way)

        with self.reply_lost(worker, step.get("lose_reply"), faults):
            return outcome_of(request, ran)

    def count(self, sql: str, params: tuple[Any, ...] = ()) -> str:
        return str(scalar(self.admin, sql, params))

    def check(self, key: IdempotencyKey) -> Any:
        stored = IdempotencyStore(self.admin, self.policy).load(key)
        if stored is None:
            return None
        record = stored.record
        return {
            "status": str(record.status),
            "fingerprint": record.fingerprint.digest.hex(),
            "token": str(record.token),
            "lease_deadline": str(record.lease_deadline_millis),
            "created": str(record.created_millis),
            "expires": str(record.expires_millis),
            "response": stored.response,
            "error": stored.error,
        }

    def concurrent(self, step: dict[str, Any]) -> Any:
        workers, keys = int(step["workers"]), int(step["keys"])
        base = self.case["key"]
        results: list[Any] = []
        lock = threading.Lock()
        barrier = threading.Barrier(workers)

        def work(n: int) -> None:
            worker = self.open(None, SystemStoreClock())
            database = worker.database
            got = []
            try:
                barrier.wait()
                for k in range(keys):
                    key = {**base, "id": f"{base['id']}-{k}"}
                    got.append(self.request(f"w{n}", step["way"], {**step, "key": key}, worker))
            finally:
                database.close()
                with lock:
                    results.extend(got)

        threads = [threading.Thread(target=work, args=(n,)) for n in range(workers)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert len(results) == workers * keys, "a worker failed"
        executed = [r for r in results if r.get("decision") == "execute" and "response" in r]
        others = sorted({str(r.get("decision", r)) for r in results if r not in executed})
        with self.admin.connection() as raw:
            cursor = raw.cursor()
            cursor.execute(
                "SELECT COUNT(*) FROM conformance_side_effect GROUP BY scope, kind, key_id"
            )
            per_key = sorted({int(row[0]) for row in cursor.fetchall()})
            cursor.close()
        allowed = step["expect"]["others"]
        assert set(others) <= set(allowed), f"decisions {others}, allowed {allowed}"
        return {
            "executed": str(len(executed)),
            "side_effects_per_key": ",".join(map(str, per_key)),
            "others": allowed,
        }

    def overlap(self, step: dict[str, Any]) -> Any:
        """A slow first request, a second one during it; both outcomes."""
        first, second = step["first"], step["second"]
        for request in (first, second):
            check_fields(request, {"way", "worker", "fingerprint", "operation"})
        got: dict[str, Any] = {}
        started = threading.Event()

        def run_first() -> None:
            started.set()
            got["first"] = self.request(first["worker"], first["way"], first)

        self.worker(first["worker"])  # made before the clock starts
        thread = threading.Thread(target=run_first)
        thread.start()
        started.wait()
        time.sleep(int(step["second_after_millis"]) / 1000)
        got["second"] = self.request(second["worker"], second["way"], second)
        thread.join()
        for name in ("first", "second"):
            # An in-progress answer's retry delay depends on the clock: compared when named.
            if "retry_after_millis" not in step["expect"][name]:
                got[name].pop("retry_after_millis", None)
        return got

    def step(self, step: dict[str, Any]) -> Any:
        do = step["do"]
        if "now" in step and isinstance(self.clock, ManualStoreClock):
            self.clock.set(int(step["now"]))
        if do == "migrate":
            check_fields(step, set())
            self.admin.migrate()
            return "ok"
        if do == "migrations":
            check_fields(step, set())
            with self.admin.connection() as raw:
                cursor = raw.cursor()
                cursor.execute("SELECT version FROM mintid_schema_migrations ORDER BY version")
                versions = [str(row[0]) for row in cursor.fetchall()]
                cursor.close()
            return versions
        if do == "run":
            check_fields(
                step,
                {
                    "way",
                    "worker",
                    "fingerprint",
                    "operation",
                    "now",
                    "key",
                    "key_created",
                    "store",
                    "in_forked_child",
                    "lose_reply",
                    "unavailable_after_operation",
                },
            )
            if step.get("in_forked_child"):
                self.worker(step["worker"], step.get("store"))  # used before the fork
                return in_forked_child(partial(self.request_in_child, step))
            return self.request(step["worker"], step["way"], step)
        if do == "claim":
            check_fields(step, {"worker", "fingerprint", "now", "key", "key_created"})
            worker = self.worker(step["worker"])

            def claim() -> Any:
                request = StoreRequest(
                    Fingerprint(bytes.fromhex(step["fingerprint"])),
                    int(step["key_created"]) if "key_created" in step else None,
                )
                made = worker.store.claim_lease(self.key(step), request)
                if isinstance(made, RunResult):
                    return shown(made)
                worker.lease = made
                return {
                    "decision": "execute",
                    "token": str(made.token),
                    "lease_deadline": str(made.lease_deadline_millis),
                }

            return outcome_of(claim)
        if do == "renew":
            check_fields(step, {"worker", "now"})
            held = self.worker(step["worker"]).lease
            assert held is not None
            return outcome_of(lambda: {"lease_deadline": str(held.renew())})
        if do == "complete":
            check_fields(step, {"worker", "response", "now", "lose_reply"})
            holder = self.worker(step["worker"])
            lease = holder.lease
            assert lease is not None
            response = response_of(step["response"])
            with self.reply_lost(holder, step.get("lose_reply")):
                return outcome_of(partial(ok, lease.complete, response))
        if do == "fail":
            check_fields(step, {"worker", "failure", "error", "now", "lose_reply"})
            holder = self.worker(step["worker"])
            lease = holder.lease
            assert lease is not None
            if step["failure"] not in ("final", "retryable"):
                raise unknown("failure", step["failure"])
            retryable = step["failure"] == "retryable"
            failing = partial(ok, partial(lease.fail, retryable=retryable), step["error"])
            with self.reply_lost(holder, step.get("lose_reply")):
                return outcome_of(failing)
        if do == "check":
            check_fields(step, {"key"})
            return self.check(self.key(step))
        if do == "side_effects":
            check_fields(step, {"key"})
            key = self.key(step)
            mark = placeholder(self.admin)
            return self.count(
                f"SELECT COUNT(*) FROM conformance_side_effect "
                f"WHERE scope = {mark} AND kind = {mark} AND key_id = {mark}",
                (key.scope, key.kind, key.id),
            )
        if do == "records":
            check_fields(step, set())
            return self.count("SELECT COUNT(*) FROM idempotency_record")
        if do == "cleanup":
            check_fields(step, {"now", "batch_size"})
            worker = self.open(None, self.clock)
            try:
                return {"deleted": str(worker.store.cleanup(int(step["batch_size"])))}
            finally:
                worker.database.close()
        if do == "concurrent":
            check_fields(step, {"way", "workers", "keys", "fingerprint", "operation"})
            return self.concurrent(step)
        if do == "overlap":
            check_fields(step, {"first", "second_after_millis", "second"})
            return self.overlap(step)
        raise unknown("step", do)


def expected_decisions(case: dict[str, Any]) -> tuple[Counter[Any], dict[str, Any]]:
    """The claims the steps of ``case`` expect, by decision and way (a step in a
    forked child records in the child), and the ``concurrent`` steps' totals
    by way (their other decisions are the file's allowed ones).
    """
    decisions: Counter[Any] = Counter()
    concurrent: dict[str, Any] = {}

    def claimed(way: str, expect: Any) -> None:
        if isinstance(expect, dict) and "decision" in expect:
            decisions[key(decision=expect["decision"], way=way)] += 1

    for step in case["steps"]:
        if step["do"] == "run" and not step.get("in_forked_child"):
            claimed(step["way"], step["expect"])
        elif step["do"] == "claim":
            claimed("lease", step["expect"])
        elif step["do"] == "overlap":
            for name in ("first", "second"):
                claimed(step[name]["way"], step["expect"][name])
        elif step["do"] == "concurrent":
            total = int(step["workers"]) * int(step["keys"])
            executed = int(step["expect"]["executed"])
            concurrent[step["way"]] = (total, executed, set(step["expect"]["others"]))
    return decisions, concurrent


def check_metrics(case: dict[str, Any], recording: Recording) -> None:
    """The decisions the stores reported are the ones the steps expect; each
    claim was timed and spanned with its way and decision.
    """
    decisions, concurrent = expected_decisions(case)
    got = recording.counts("mintid.record.decisions")
    for way, (total, executed, others) in concurrent.items():
        ours = {k: n for k, n in got.items() if dict(k)["way"] == way}
        assert ours.pop(key(decision="execute", way=way), 0) == executed
        assert {dict(k)["decision"] for k in ours} <= others
        assert sum(ours.values()) == total - executed
        for k in [k for k in got if dict(k)["way"] == way]:
            del got[k]
    assert got == decisions, case["name"]
    per_way: Counter[Any] = Counter()
    for k, n in recording.counts("mintid.record.decisions").items():
        per_way[key(way=dict(k)["way"])] += n
    assert recording.counts("mintid.record.claim.duration") == per_way
    spans: Counter[Any] = Counter()
    for span in recording.spans("mintid.claim"):
        attributes = dict(span.attributes or {})
        if "decision" not in attributes:  # the claim raised (an unreachable database, …)
            assert span.status.status_code is StatusCode.ERROR
            continue
        spans[key(decision=str(attributes["decision"]), way=str(attributes["way"]))] += 1
    assert spans == recording.counts("mintid.record.decisions")


def run_scenario(
    server: Server,
    case: dict[str, Any],
    runner: Callable[..., Run] = Run,
) -> None:
    """Every step of ``case`` through ``runner`` (the sync store's, or the async store's)."""
    if case["op"] != "scenario":
        raise unknown("op", case["op"])
    clocks: dict[str, Callable[[], StoreClock]] = {
        "manual": ManualStoreClock,
        "system": SystemStoreClock,
    }
    if case["clock"] not in clocks:
        raise unknown("clock", case["clock"])
    with databases(server.fresh()) as make:
        admin = make()
        run = runner(server, make, case, clocks[case["clock"]](), policy_of(case["policy"]), admin)
        try:
            for index, step in enumerate(case["steps"]):
                got = run.step(step)
                if index == 0:
                    server.business_table(admin)
                assert got == expected(step["expect"]), f"step {index}: {step['do']}"
        finally:
            run.close()
        check_metrics(case, run.recording)


@pytest.mark.parametrize("case", cases("idempotency.json"), ids=case_id)
def test_idempotency_scenario(server: Server, case: dict[str, Any]) -> None:
    run_scenario(server, case)
