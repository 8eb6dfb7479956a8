"""Runs every case of tests/conformance/leases.json, segments.json and
outbox.json through mintid.store.aio on SQLite, PostgreSQL and MariaDB: the
sync runners' scenario reading, over sync views of the async stores
(store/async_support.py).
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from mintid.store.aio import AsyncSegmentIds, LoopBindingError
from store import test_store_leases, test_store_outbox, test_store_segments
from store.async_support import AsyncKit
from store.store_support import Server, case_id, cases, in_forked_child
from store.test_store_segments import AFTER_FORK, FORK_POLICY


@pytest.mark.parametrize("case", cases("leases.json"), ids=case_id)
def test_lease_scenario_async(server: Server, case: dict[str, Any]) -> None:
    test_store_leases.run_case(server, case, AsyncKit())


@pytest.mark.parametrize("case", cases("segments.json"), ids=case_id)
def test_segment_scenario_async(server: Server, case: dict[str, Any]) -> None:
    test_store_segments.run_case(server, case, AsyncKit())


@pytest.mark.parametrize("case", cases("outbox.json"), ids=case_id)
def test_outbox_scenario_async(server: Server, case: dict[str, Any]) -> None:
    test_store_outbox.run_case(server, case, AsyncKit())


def test_forked_children_never_hand_out_the_parents_ids_async(server: Server) -> None:
    """The asyncio twin of the sync fork test: the inherited
    :class:`AsyncSegmentIds` hands out nothing in a child (its run and
    segments are forgotten and its database is refused there, naming the fix);
    one made in the child hands out IDs no other process does.
    """
    server.fresh()
    make = server.async_factory()
    loop = asyncio.new_event_loop()
    database = make()
    try:
        loop.run_until_complete(database.migrate())
        ids = AsyncSegmentIds(database, "forked", FORK_POLICY, background=False)
        drawn = [loop.run_until_complete(ids.next_id())]

        async def in_child() -> list[int]:
            for _ in range(2):  # refused each time, never an ID from memory
                with pytest.raises(LoopBindingError, match="make a new one there"):
                    await ids.next_id()
            own = make()
            try:
                fresh = AsyncSegmentIds(own, "forked", FORK_POLICY)
                return [await fresh.next_id() for _ in range(AFTER_FORK)]
            finally:
                await own.close()

        children = [in_forked_child(lambda: asyncio.run(in_child())) for _ in range(2)]
        drawn += [loop.run_until_complete(ids.next_id()) for _ in range(AFTER_FORK)]
    finally:
        loop.run_until_complete(database.close())
        loop.close()
    every = drawn + [i for child in children for i in child]
    assert len(every) == 3 * AFTER_FORK + 1
    assert len(set(every)) == len(every), "an ID handed out by two processes"
