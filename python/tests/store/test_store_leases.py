"""Runs every case of tests/conformance/leases.json through mintid.store.WorkerLeases
on SQLite, PostgreSQL and MariaDB."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from itertools import pairwise
from typing import Any

import pytest

from mintid import LeaseGuard, LeasePolicy, Snowflake, SnowflakeLayout
from mintid.errors import MintidError
from mintid.store import LeasedSnowflake, StoreUnavailableError
from mintid.testing import ManualClock
from store.store_support import (
    SYNC,
    Kit,
    ManualStoreClock,
    Server,
    case_id,
    cases,
    check_fields,
    unknown,
)


def policy_of(spec: dict[str, Any]) -> LeasePolicy:
    layout = spec["layout"]
    if not isinstance(layout, str):
        layout = SnowflakeLayout(
            time_bits=int(layout["time_bits"]),
            worker_bits=int(layout["worker_bits"]),
            sequence_bits=int(layout["sequence_bits"]),
            epoch_millis=int(layout["epoch_millis"]),
            tick_millis=int(layout["tick_millis"]),
        )
    return LeasePolicy(
        layout,
        lease_millis=int(spec["lease_millis"]),
        renew_interval_millis=int(spec["renew_interval_millis"]),
        safety_margin_millis=int(spec["safety_margin_millis"]),
        renew_retry_millis=int(spec["renew_retry_millis"]),
        max_skew_millis=int(spec["max_skew_millis"]),
        max_start_wait_millis=int(spec["max_start_wait_millis"]),
    )


def optional_int(step: dict[str, Any], field: str) -> int | None:
    return None if field not in step else int(step[field])


def ok(action: Callable[..., None], *args: Any) -> str:
    action(*args)
    return "ok"


def outcome(action: Callable[[], Any]) -> Any:
    try:
        return action()
    except MintidError as error:
        return {"error": error.code}


@dataclass
class Host:
    guard: LeaseGuard
    clock: ManualClock
    snowflake: Snowflake


def run_case(server: Server, case: dict[str, Any], kit: Kit = SYNC) -> None:
    if case["op"] != "scenario" or case["clock"] not in ("manual", "system"):
        raise unknown("case shape", (case["op"], case["clock"]))
    policy = policy_of(case["policy"])
    clock = ManualStoreClock()
    hosts: dict[str, Host] = {}
    leased: dict[str, LeasedSnowflake] = {}
    ids: list[int] = []
    with kit.databases(server) as make:
        database = make()
        leases = kit.leases(database, policy, clock)
        for index, step in enumerate(case["steps"]):
            do = step["do"]
            now = int(step.get("now", 0))
            clock.set(now)
            host = hosts.get(step.get("host", ""))
            got: Any
            if do == "migrate":
                check_fields(step, set())
                database.migrate()
                got = "ok"
            elif do == "acquire":
                check_fields(step, {"host", "owner", "now", "timeout"})

                def acquire(
                    name: str = step["host"],
                    owner: str = step["owner"],
                    now: int = now,
                    timeout: int | None = optional_int(step, "timeout"),
                ) -> Any:
                    guard = leases.acquire(owner, timeout)
                    generator_clock = ManualClock(now)
                    hosts[name] = Host(
                        guard,
                        generator_clock,
                        Snowflake(
                            worker=guard.worker_id,
                            layout=policy.layout,
                            starting_after_unix_millis=guard.start_after_millis,
                            clock=generator_clock,
                        ),
                    )
                    return {
                        "worker_id": str(guard.worker_id),
                        "fencing_token": str(guard.fencing_token),
                        "start_after": str(guard.start_after_millis),
                        "ready_at": str(guard.ready_at_millis),
                    }

                got = outcome(acquire)
            elif do == "check":
                check_fields(step, {"host", "now"})
                assert host is not None
                got = outcome(partial(ok, host.guard.check, now))
            elif do == "generate":
                check_fields(step, {"host", "now", "count"})
                assert host is not None

                def generate(
                    h: Host = host, count: int = int(step["count"]), now: int = now
                ) -> Any:
                    h.clock.set(now)
                    for _ in range(count):
                        h.guard.check(now)
                        snowflake_id = h.snowflake.next_id()
                        h.guard.admit(snowflake_id)
                        ids.append(snowflake_id)
                    return {"admitted": str(count)}

                got = outcome(generate)
            elif do == "renew":
                check_fields(step, {"host", "now", "high_water"})
                assert host is not None
                high_water = int(step["high_water"])
                got = outcome(partial(ok, leases.renew, host.guard, high_water))
            elif do == "renew_unreachable":
                check_fields(step, {"host", "now"})
                assert host is not None
                down = kit.leases(kit.unavailable(server), policy, clock)
                with pytest.raises(StoreUnavailableError):
                    down.renew(host.guard, now)
                got = {"next_renewal_at": str(host.guard.next_renewal_at_millis)}
            elif do == "release":
                check_fields(step, {"host", "now", "high_water"})
                assert host is not None
                got = {"released": leases.release(host.guard, int(step["high_water"]))}
            elif do == "row":
                check_fields(step, {"worker_id"})
                row = leases.load(int(step["worker_id"]))
                got = (
                    None
                    if row is None
                    else {
                        "owner": row.owner,
                        "fencing_token": str(row.fencing_token),
                        "lease_deadline": str(row.lease_deadline_millis),
                        "high_water": str(row.high_water_millis),
                    }
                )
            elif do == "guard":
                check_fields(step, {"host"})
                assert host is not None
                got = {
                    "lease_deadline": str(host.guard.lease_deadline_millis),
                    "stop_at": str(host.guard.stop_at_millis),
                    "next_renewal_at": str(host.guard.next_renewal_at_millis),
                }
            elif do == "leased_acquire":
                check_fields(step, {"host", "owner", "timeout"})
                leased[step["host"]] = kit.leased(
                    kit.leases(database, policy),
                    step["owner"],
                    optional_int(step, "timeout"),
                )
                got = {"worker_id": str(leased[step["host"]].worker_id)}
            elif do == "leased_generate":
                check_fields(step, {"host", "count"})
                generator = leased[step["host"]]
                ids.extend(generator.next_id() for _ in range(int(step["count"])))
                got = {"admitted": step["count"]}
            elif do == "leased_release":
                check_fields(step, {"host"})
                generator = leased.pop(step["host"])
                released = generator.close()
                row = leases.load(generator.worker_id)
                assert row is not None
                last = policy.layout.decode(ids[-1]).unix_millis
                got = {
                    "released": released,
                    "high_water_is_generators": row.high_water_millis
                    == generator.high_water_millis,
                    "high_water_covers_last_id": row.high_water_millis >= last,
                }
            elif do == "ids_increasing":
                check_fields(step, set())
                got = "ok" if all(a < b for a, b in pairwise(ids)) else "decreasing"
            elif do == "ids_unique":
                check_fields(step, set())
                got = (
                    "ok" if len(ids) == len(set(ids)) else {"duplicates": len(ids) - len(set(ids))}
                )
            elif do == "concurrent_acquire":
                check_fields(step, {"hosts"})
                got = concurrent_acquire(kit, make, policy, int(step["hosts"]))
            else:
                raise unknown("step", do)
            assert got == step["expect"], f"step {index}: {do}"


def concurrent_acquire(kit: Kit, make: Callable[..., Any], policy: LeasePolicy, count: int) -> Any:
    results: list[Any] = []
    lock = threading.Lock()
    barrier = threading.Barrier(count)

    def start(n: int) -> None:
        database = make()
        try:
            barrier.wait()
            got = outcome(lambda: kit.leases(database, policy).acquire(f"host-{n}").worker_id)
        finally:
            database.close()
        with lock:
            results.append(got)

    threads = [threading.Thread(target=start, args=(n,)) for n in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    workers = [r for r in results if isinstance(r, int)]
    assert len(workers) == len(set(workers)), "two hosts got one worker id"
    refused = [r for r in results if not isinstance(r, int)]
    assert all(r == {"error": "lease.no_worker_free"} for r in refused), refused
    return {"acquired": str(len(workers)), "no_worker_free": str(len(refused))}


@pytest.mark.parametrize("case", cases("leases.json"), ids=case_id)
def test_lease_scenario(server: Server, case: dict[str, Any]) -> None:
    run_case(server, case)
