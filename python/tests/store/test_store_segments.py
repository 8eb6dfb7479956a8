"""Runs every case of tests/conformance/segments.json through mintid.store.SegmentIds
on SQLite, PostgreSQL and MariaDB."""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable
from typing import Any

import pytest

from mintid import MintidError, SegmentPolicy
from mintid.store import Database, SegmentIds
from store.store_support import (
    SYNC,
    Kit,
    ManualStoreClock,
    Server,
    case_id,
    cases,
    check_fields,
    in_forked_child,
    unknown,
)


def policy_of(spec: dict[str, Any]) -> SegmentPolicy:
    return SegmentPolicy(
        int(spec["initial_step"]),
        int(spec["min_step"]),
        int(spec["max_step"]),
        fetch_at_percent=int(spec["fetch_at_percent"]),
        grow_below_millis=int(spec["grow_below_millis"]),
        shrink_above_millis=int(spec["shrink_above_millis"]),
    )


def row(kit: Kit, database: Database, tag: str) -> Any:
    found = kit.segment_row(database, tag)
    return None if found is None else {"max_id": str(found[0]), "step": str(found[1])}


def concurrent(
    kit: Kit,
    make: Callable[[], Database],
    tag: str,
    policy: SegmentPolicy,
    processes: int,
    each: int,
) -> tuple[list[list[int]], int]:
    drawn: list[list[int]] = []
    lock = threading.Lock()
    barrier = threading.Barrier(processes)

    def draw() -> None:
        database = make()
        try:
            ids = kit.segments(database, tag, policy)
            barrier.wait()
            got = [ids.next_id() for _ in range(each)]
        finally:
            database.close()
        with lock:
            drawn.append(got)

    threads = [threading.Thread(target=draw) for _ in range(processes)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(drawn) == processes, "a process failed"
    return drawn, sum(len(ids) for ids in drawn)


def run_case(server: Server, case: dict[str, Any], kit: Kit = SYNC) -> None:
    if case["op"] != "scenario" or case["clock"] not in ("manual", "system"):
        raise unknown("case shape", (case["op"], case["clock"]))
    policy = policy_of(case["policy"])
    clock = ManualStoreClock()
    processes: dict[tuple[str, str], Any] = {}
    down: set[str] = set()
    with kit.databases(server) as make:
        database = make()
        unavailable = kit.unavailable(server)

        def store_of(process: str) -> Database:
            return unavailable if process in down else database

        for index, step in enumerate(case["steps"]):
            do = step["do"]
            clock.set(int(step.get("now", 0)))
            got: Any
            if do == "migrate":
                check_fields(step, set())
                database.migrate()
                got = "ok"
            elif do == "next":
                check_fields(step, {"process", "now", "count", "tag"})
                place = (step["process"], step.get("tag", case["tag"]))
                if place not in processes:
                    processes[place] = kit.segments(
                        store_of(place[0]), place[1], policy, clock=clock, background=False
                    )
                ids = processes[place]
                taken: list[str] = []
                got = taken
                try:
                    for _ in range(int(step["count"])):
                        taken.append(str(ids.next_id()))
                except MintidError as error:
                    got = {"error": error.code, "drawn": taken}
            elif do in ("disconnect", "reconnect"):
                check_fields(step, {"process"})
                (down.add if do == "disconnect" else down.discard)(step["process"])
                for place, ids in processes.items():
                    if place[0] == step["process"]:
                        ids.database = store_of(place[0])
                got = "ok"
            elif do == "restart":
                check_fields(step, {"process"})
                for place in [p for p in processes if p[0] == step["process"]]:
                    del processes[place]
                got = "ok"
            elif do == "row":
                check_fields(step, set())
                got = row(kit, database, case["tag"])
            elif do == "concurrent":
                check_fields(step, {"processes", "ids_per_process"})
                drawn, total = concurrent(
                    kit,
                    make,
                    case["tag"],
                    policy,
                    int(step["processes"]),
                    int(step["ids_per_process"]),
                )
                every = [i for ids in drawn for i in ids]
                decreasing = sum(1 for ids in drawn for a, b in itertools.pairwise(ids) if b <= a)
                top = row(kit, database, case["tag"])
                unused = int(top["max_id"]) - total
                limit = int(step["expect"]["max_unused"])
                got = {
                    "duplicates": str(len(every) - len(set(every))),
                    "decreasing": str(decreasing),
                    "max_unused": step["expect"]["max_unused"] if unused <= limit else str(unused),
                }
            else:
                raise unknown("step", do)
            assert got == step["expect"], f"step {index}: {do}"


@pytest.mark.parametrize("case", cases("segments.json"), ids=case_id)
def test_segment_scenario(server: Server, case: dict[str, Any]) -> None:
    run_case(server, case)


#: Ten IDs a run while the next fetch is to be arranged, so a fetch of a second
#: segment is done before the fork and a third is needed after it.
FORK_POLICY = SegmentPolicy(100, 100, 100, fetch_at_percent=10)
#: More IDs than the parent holds in memory at the fork (its run and two segments).
AFTER_FORK = 250


@pytest.mark.parametrize("background", [False, True], ids=["inline", "background"])
def test_forked_children_never_hand_out_the_parents_ids(server: Server, background: bool) -> None:
    """A segment fetched in the parent, one ID taken, then ``os.fork()`` twice
    (gunicorn ``--preload``, Celery prefork): the parent and both children
    hand out IDs, each child reporting its own through a pipe; none twice.
    """
    with SYNC.databases(server) as make:
        database = make()
        database.migrate()
        ids = SegmentIds(database, "forked", FORK_POLICY, background=background)
        drawn = [ids.next_id()]
        children = [
            in_forked_child(lambda: [ids.next_id() for _ in range(AFTER_FORK)]) for _ in range(2)
        ]
        drawn += [ids.next_id() for _ in range(AFTER_FORK)]
        every = drawn + [i for child in children for i in child]
        assert len(every) == 3 * AFTER_FORK + 1
        assert len(set(every)) == len(every), "an ID handed out by two processes"
        assert all(len(child) == AFTER_FORK for child in children)


@pytest.mark.parametrize("tag", ["", "t" * 65, "café", "a\0b"])
def test_a_bad_tag_is_refused_when_the_source_is_made(tmp_path: Any, tag: str) -> None:
    """The core refuses the spec when the wire is made, and the source raises then,
    before any query (the database is never reached), in sync and asyncio alike.
    """
    from mintid import _wire, _wire_codec
    from mintid.store import SqliteDatabase
    from mintid.store.aio import AsyncSegmentIds, AsyncSqliteDatabase

    database = SqliteDatabase(str(tmp_path / "never.db"))
    spec = _wire_codec.segment_spec(
        _wire.spec(_wire_codec.SEGMENT, database.manifest),
        tag,
        _wire_codec.segment_policy(SegmentPolicy()),
    )
    _wire.Wire(spec)  # unchecked: the refusal waits for the first step
    with pytest.raises(MintidError) as made:
        _wire.Wire(spec, checked=True)
    with pytest.raises(MintidError) as sync:
        SegmentIds(database, tag, SegmentPolicy())
    with pytest.raises(MintidError) as asynchronous:
        AsyncSegmentIds(AsyncSqliteDatabase(str(tmp_path / "never.db")), tag, SegmentPolicy())
    codes = {made.value.code, sync.value.code, asynchronous.value.code}
    assert codes == {"segment.invalid_tag"}
    assert not (tmp_path / "never.db").exists()
