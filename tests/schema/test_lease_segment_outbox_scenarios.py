"""Runs the conformance scenarios of tests/conformance/{leases,segments}.json at the
SQL level on every dialect, with small Python models of the core's rules (docs/spec.md,
"Worker-id leases, segments and the outbox"). It proves the scenarios consistent with the
schema; each language's adapter runs the same files through the real core. (outbox.json is
the core's relay driver end to end, tested against a scripted table in
core/tests/outbox_driver.rs.)"""

import contextlib
import json
import pathlib
import threading
import time

import pymysql
import pytest

from conftest import Db

CONFORMANCE = pathlib.Path(__file__).resolve().parents[1] / "conformance"


def cases(name: str) -> list[dict]:
    return json.loads((CONFORMANCE / name).read_text())["cases"]


def begin(db: Db) -> None:
    db.execute("BEGIN IMMEDIATE" if db.dialect == "sqlite" else "BEGIN")


def text(value) -> str | None:
    return value.decode() if isinstance(value, (bytes, bytearray)) else value


@pytest.fixture
def fresh(connect):
    """A connection with the lease, segment and outbox tables emptied."""
    db = connect()
    for table in ("worker_lease", "id_segment", "outbox_message"):
        db.execute(f"DELETE FROM {table}")
    yield db
    db.close()


def migrate_step(db: Db, step: dict) -> None:
    db.migrate()
    assert step["expect"] == "ok"


# ---------------------------------------------------------------- worker-id leases

PRESETS = {"classic": (10, 12, 1735689600000, 1), "js-safe": (6, 6, 1735689600000, 1)}


class LeaseError(Exception):
    def __init__(self, code: str):
        super().__init__(code)
        self.code = code


class Policy:
    def __init__(self, p: dict):
        layout = p["layout"]
        if isinstance(layout, str):
            self.worker_bits, self.sequence_bits, self.epoch, self.tick = PRESETS[layout]
        else:
            self.worker_bits, self.sequence_bits = layout["worker_bits"], layout["sequence_bits"]
            self.epoch, self.tick = int(layout["epoch_millis"]), int(layout["tick_millis"])
        self.max_worker = 2**self.worker_bits - 1
        for field in ("lease_millis", "renew_interval_millis", "safety_margin_millis",
                      "renew_retry_millis", "max_skew_millis", "max_start_wait_millis"):
            setattr(self, field.removesuffix("_millis"), int(p[field]))


class Holder:
    """A lease guard and its generator, as the core's LeaseGuard and Snowflake behave."""

    def __init__(self, policy: Policy, row: dict, now: int):
        held = row["owner"] is not None
        deadline, hw = row["lease_deadline_millis"], row["high_water_millis"]
        self.p, self.worker, self.token = policy, row["worker_id"], row["fencing_token"] + 1
        self.start_after = max(hw, deadline) if held else hw
        self.ready_at = max(self.start_after + 1, deadline + policy.max_skew if held else 0)
        if self.ready_at - now > policy.max_start_wait:
            raise LeaseError("lease.high_water_ahead")
        self.deadline, self.renew_at, self.hw = now + policy.lease, now + policy.renew_interval, \
            self.start_after
        self.state, self.next_slot = "live", ((self.start_after - policy.epoch) // policy.tick + 1) \
            << policy.sequence_bits

    def live(self):
        if self.state != "live":
            raise LeaseError(f"lease.{self.state}")

    def check(self, now: int) -> None:
        self.live()
        if now >= self.deadline - self.p.safety_margin:
            raise LeaseError("lease.expired")
        if now < self.ready_at:
            raise LeaseError("lease.not_ready")

    def generate(self, now: int) -> int:
        self.check(now)
        p = self.p
        slot = max(self.next_slot, ((now - p.epoch) // p.tick) << p.sequence_bits)
        self.next_slot = slot + 1
        tick, seq = slot >> p.sequence_bits, slot & (2**p.sequence_bits - 1)
        unix_millis = p.epoch + tick * p.tick
        assert self.start_after < unix_millis < self.deadline - p.safety_margin  # the guard's admit
        return tick << (p.worker_bits + p.sequence_bits) | self.worker << p.sequence_bits | seq

    def renewal(self, now: int, high_water: int) -> dict:
        self.live()
        if now >= self.deadline:
            raise LeaseError("lease.expired")
        if now + self.p.lease <= self.deadline:
            raise LeaseError("lease.clock_behind")
        return {"worker_id": self.worker, "fencing_token": self.token,
                "lease_deadline_millis": now + self.p.lease,
                "high_water_millis": max(high_water, self.hw), "now_millis": now}

    def renewed(self, renewal: dict, rows: int) -> None:
        if rows != 1:
            self.state = "lost"
            raise LeaseError("lease.lost")
        self.deadline = max(self.deadline, renewal["lease_deadline_millis"])
        self.hw = max(self.hw, renewal["high_water_millis"])
        self.renew_at = max(self.renew_at, renewal["now_millis"] + self.p.renew_interval)


def lease_acquire(db: Db, policy: Policy, owner: str, now: int, timeout=None) -> Holder:
    """The core's LeaseAcquisition: find (skipping rows too far ahead), take; seed, retry,
    wait up to the timeout (the manual clock moves on with each wait), or fail."""
    deadline = None if timeout is None else now + timeout
    for _ in range(2000):
        if deadline is not None and now >= deadline:
            raise LeaseError("lease.acquire_timeout")
        begin(db)
        skipped, after, holder = None, None, None
        try:
            while True:
                if after is None:
                    row = db.run("lease_find", max_worker=policy.max_worker, now_millis=now)
                else:
                    row = db.run("lease_find_after", max_worker=policy.max_worker,
                                 now_millis=now, after_worker=after)
                if row is None:
                    break
                try:
                    holder = Holder(policy, row, now)
                    break
                except LeaseError:  # lease.high_water_ahead: usable once within max_start_wait
                    ready = max(row["high_water_millis"] + 1, 0)
                    usable = ready - policy.max_start_wait
                    skipped = usable if skipped is None else min(skipped, usable)
                    after = row["worker_id"]
            if holder is not None:
                taken = db.run("lease_take", worker_id=holder.worker, owner=owner,
                               fencing_token=holder.token, lease_deadline_millis=holder.deadline,
                               high_water_millis=holder.start_after,
                               expected_token=row["fencing_token"], now_millis=now)
        except pymysql.err.OperationalError as error:
            # InnoDB may pick a racing acquisition as a deadlock victim (1213): the core's
            # LeaseAcquisition rolls back and searches again, and so does this reader.
            if error.args[0] != 1213:
                raise
            db.execute("ROLLBACK")
            continue
        db.execute("COMMIT")
        if holder is not None:
            if taken == 1:
                return holder
            continue
        if skipped is not None:
            if deadline is None:
                raise LeaseError("lease.high_water_ahead")
            now = min(max(skipped, now + 1), deadline)
            continue
        count = db.run("lease_count", max_worker=policy.max_worker, now_millis=now)
        if count["present_count"] <= policy.max_worker:
            db.run("lease_seed", max_worker=policy.max_worker, now_millis=now)
        elif count["free_count"] == 0:
            if deadline is None:
                raise LeaseError("lease.no_worker_free")
            now = min(now + policy.renew_retry, deadline)
        else:
            time.sleep(0.002)
    raise AssertionError("the acquisition did not settle")


def outcome(action, shown=lambda value: "ok"):
    try:
        return shown(action())
    except LeaseError as error:
        return {"error": error.code}


def run_lease_case(connect, db: Db, case: dict) -> None:
    policy, hosts, ids = Policy(case["policy"]), {}, []
    for step in case["steps"]:
        do, expect = step["do"], step["expect"]
        now = int(step.get("now", 0))
        host = hosts.get(step.get("host"))
        if do == "migrate":
            migrate_step(db, step)
        elif do == "acquire":
            timeout = int(step["timeout"]) if "timeout" in step else None

            def acquired():
                hosts[step["host"]] = lease_acquire(db, policy, step["owner"], now, timeout)
                held = hosts[step["host"]]
                return {"worker_id": str(held.worker), "fencing_token": str(held.token),
                        "start_after": str(held.start_after), "ready_at": str(held.ready_at)}
            assert outcome(acquired, lambda value: value) == expect, step
        elif do == "check":
            assert outcome(lambda: host.check(now)) == expect, step
        elif do == "generate":
            def generated():
                for _ in range(int(step["count"])):
                    ids.append(host.generate(now))
                return {"admitted": step["count"]}
            assert outcome(generated, lambda value: value) == expect, step
        elif do == "renew":
            def renewed():
                try:
                    renewal = host.renewal(now, int(step["high_water"]))
                except LeaseError as error:
                    if error.code in ("lease.clock_behind", "lease.expired"):
                        host.renew_at = now + policy.renew_retry  # a failed attempt
                    raise
                host.renewed(renewal, db.run("lease_renew", **renewal))
            assert outcome(renewed) == expect, step
        elif do == "renew_unreachable":
            host.renew_at = now + policy.renew_retry
            assert expect == {"next_renewal_at": str(host.renew_at)}
        elif do == "release":
            high_water = max(int(step["high_water"]), host.hw)
            if host.state == "live":
                host.state = "released"
            rows = db.run("lease_release", worker_id=host.worker, fencing_token=host.token,
                          high_water_millis=high_water, now_millis=now)
            assert {"released": rows == 1} == expect, step
        elif do == "row":
            row = db.run("lease_load", worker_id=int(step["worker_id"]))
            got = None if row is None else {
                "owner": text(row["owner"]), "fencing_token": str(row["fencing_token"]),
                "lease_deadline": str(row["lease_deadline_millis"]),
                "high_water": str(row["high_water_millis"])}
            assert got == expect, step
        elif do == "guard":
            assert {"lease_deadline": str(host.deadline),
                    "stop_at": str(host.deadline - policy.safety_margin),
                    "next_renewal_at": str(host.renew_at)} == expect, step
        elif do == "ids_unique":
            assert len(ids) == len(set(ids)) and expect == "ok"
        elif do == "concurrent_acquire":
            results: list = []
            barrier = threading.Barrier(int(step["hosts"]))

            def start(n: int) -> None:
                conn = connect()
                try:
                    barrier.wait()
                    now_millis = int(time.time() * 1000)
                    results.append(outcome(lambda: lease_acquire(conn, policy, f"host-{n}", now_millis),
                                           lambda held: held.worker))
                finally:
                    conn.close()

            threads = [threading.Thread(target=start, args=(n,)) for n in range(int(step["hosts"]))]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            workers = [r for r in results if isinstance(r, int)]
            assert len(workers) == len(set(workers))
            assert {"acquired": str(len(workers)),
                    "no_worker_free": str(results.count({"error": "lease.no_worker_free"}))} == expect
        else:
            raise AssertionError(f"unknown step {do!r}")


@pytest.mark.parametrize("case", cases("leases.json"), ids=lambda case: case["name"])
def test_lease_scenario(connect, fresh, case):
    if any(step["do"].startswith("leased_") for step in case["steps"]):
        pytest.skip("a LeasedSnowflake case: the hosts' API only")
    run_lease_case(connect, fresh, case)


# ---------------------------------------------------------------- segments


class Allocator:
    """The core's SegmentAllocator: a current and a next segment, one fetch in flight."""

    def __init__(self, p: dict):
        self.p, self.cur, self.nxt, self.step = p, None, None, int(p["initial_step"])

    @staticmethod
    def left(buffer) -> int:
        return 0 if buffer is None else buffer["last"] - buffer["next"] + 1

    def next_id(self):
        if self.left(self.cur) == 0:
            self.cur, self.nxt = self.nxt, None
        if self.left(self.cur) == 0:
            return None
        self.cur["next"] += 1
        return self.cur["next"] - 1

    def fetch_due(self, now: int):
        if self.left(self.nxt) > 0:
            return None
        cur = self.cur
        if self.left(cur) > 0:
            size, used = cur["last"] - cur["first"] + 1, cur["next"] - cur["first"]
            if used * 100 < size * self.p["fetch_at_percent"]:
                return None
        if cur is None:
            return self.step
        lasted, step = now - cur["at"], self.step
        step = step * 2 if lasted < int(self.p["grow_below_millis"]) else \
            step // 2 if lasted > int(self.p["shrink_above_millis"]) else step
        return min(max(step, int(self.p["min_step"])), int(self.p["max_step"]))

    def fetched(self, max_id: int, step: int, now: int) -> None:
        self.step = step
        buffer = {"first": max_id - step + 1, "next": max_id - step + 1, "last": max_id, "at": now}
        if self.left(self.cur) > 0:
            self.nxt = buffer
        else:
            self.cur, self.nxt = buffer, None


def segment_fetch(db: Db, tag: str, step: int, now: int) -> int:
    for _ in range(2):
        begin(db)
        if db.run("segment_fetch", tag=tag, step=step, now_millis=now) == 1:
            row = db.run("segment_load", tag=tag)
            db.execute("COMMIT")
            return row["max_id"]
        db.execute("ROLLBACK")
        db.run("segment_create", tag=tag, step=step, now_millis=now)
    raise AssertionError("the tag was not created")


class DatabaseDown(Exception):
    """A process's database is out of reach (``disconnect``): ``store.unavailable``."""


def draw(db: Db, allocator: Allocator, tag: str, now: int, down: bool = False) -> int:
    """One ID; any due fetch runs at once (standing in for the background fetch). With the
    database down a fetch fails; that is the caller's error only when no ID is left in memory.
    """

    def fetch(step: int) -> None:
        if down:
            raise DatabaseDown
        allocator.fetched(segment_fetch(db, tag, step, now), step, now)

    for _ in range(2):
        step = allocator.fetch_due(now)
        if step is not None:
            try:
                fetch(step)
            except DatabaseDown:
                if allocator.left(allocator.cur) + allocator.left(allocator.nxt) == 0:
                    raise
        value = allocator.next_id()
        if value is not None:
            step = allocator.fetch_due(now)
            if step is not None:
                with contextlib.suppress(DatabaseDown):
                    fetch(step)
            return value
    raise AssertionError("no ID after a fetch")


def run_segment_case(connect, db: Db, case: dict) -> None:
    policy, allocators, down = case["policy"], {}, set()
    for step in case["steps"]:
        do, expect = step["do"], step["expect"]
        if do == "migrate":
            migrate_step(db, step)
        elif do == "next":
            allocator = allocators.setdefault(step["process"], Allocator(policy))
            tag = step.get("tag", case["tag"])
            drawn: list[str] = []
            got: object = drawn
            try:
                for _ in range(int(step["count"])):
                    now = int(step["now"])
                    drawn.append(str(draw(db, allocator, tag, now, step["process"] in down)))
            except DatabaseDown:
                got = {"error": "store.unavailable", "drawn": drawn}
            assert got == expect, step
        elif do in ("disconnect", "reconnect"):
            (down.add if do == "disconnect" else down.discard)(step["process"])
            assert expect == "ok"
        elif do == "restart":
            allocators.pop(step["process"], None)
            assert expect == "ok"
        elif do == "row":
            row = db.run("segment_load", tag=case["tag"])
            got = None if row is None else {"max_id": str(row["max_id"]), "step": str(row["step"])}
            assert got == expect, step
        elif do == "concurrent":
            drawn: dict[int, list[int]] = {}
            processes, per = int(step["processes"]), int(step["ids_per_process"])
            barrier = threading.Barrier(processes)

            def work(n: int) -> None:
                conn, allocator = connect(), Allocator(policy)
                try:
                    barrier.wait()
                    drawn[n] = [draw(conn, allocator, case["tag"], int(time.time() * 1000))
                                for _ in range(per)]
                finally:
                    conn.close()

            threads = [threading.Thread(target=work, args=(n,)) for n in range(processes)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            every = [value for values in drawn.values() for value in values]
            assert len(every) == processes * per
            decreasing = sum(b <= a for values in drawn.values() for a, b in zip(values, values[1:]))
            unused = db.run("segment_load", tag=case["tag"])["max_id"] - len(every)
            assert expect["duplicates"] == str(len(every) - len(set(every)))
            assert expect["decreasing"] == str(decreasing)
            assert 0 <= unused <= int(expect["max_unused"]), unused
        else:
            raise AssertionError(f"unknown step {do!r}")


@pytest.mark.parametrize("case", cases("segments.json"), ids=lambda case: case["name"])
def test_segment_scenario(connect, fresh, case):
    run_segment_case(connect, fresh, case)
