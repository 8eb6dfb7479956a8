"""Runs every case of tests/conformance/idempotency.json through
mintid.store.aio on SQLite, PostgreSQL and MariaDB: the sync runner's
scenario reading, over sync views of the async store (store/async_support.py).
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from mintid.store import StoreClock
from mintid.store.aio import AsyncDatabase, AsyncIdempotencyStore, LoopBindingError
from store.async_support import AsyncClock, LoopThread, SyncDatabase, SyncStore
from store.store_support import Server, case_id, cases
from store.test_store_idempotency import Run, Worker, run_scenario


class AsyncRun(Run):
    """The sync runner, with every worker's store an :class:`AsyncIdempotencyStore`."""

    #: PostgreSQL's async driver.
    driver = "psycopg"

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.loop = LoopThread()
        self.make_async = self.server.async_factory(self.driver)
        self.opened: list[SyncDatabase] = []

    def open(self, store: str | None, clock: StoreClock | None) -> Worker:
        made: AsyncDatabase
        if store == "unavailable":
            made = self.server.unavailable_async(self.driver)
        elif store == "proxied" and self.server.dialect != "sqlite":
            made = self.server.async_factory(self.driver, self.server.proxied())()
        else:
            made = self.make_async(found_rows=store == "found_rows")
        database = SyncDatabase(self.loop, made)
        self.opened.append(database)
        async_clock = None if clock is None else AsyncClock(clock)
        metrics = self.recording.metrics
        store_ = AsyncIdempotencyStore(made, self.policy, clock=async_clock, metrics=metrics)
        return Worker(database, SyncStore(self.loop, store_))

    def request_in_child(self, step: dict[str, Any]) -> Any:
        """In a forked child the parent's async store refuses (its loop and
        connections are the parent's); a store made in the child serves.
        """
        used = self.worker(step["worker"], step.get("store")).store
        assert isinstance(used, SyncStore)
        parent = used.inner
        try:
            asyncio.run(parent.load(self.key(step)))
        except LoopBindingError:
            pass
        else:
            raise AssertionError("the parent's async store served in a forked child")
        self.loop = LoopThread()
        worker = self.open(step.get("store"), self.clock)
        return self.request(step["worker"], step["way"], step, worker)

    def close(self) -> None:
        for database in self.opened:
            database.close()
        self.loop.stop()


@pytest.mark.parametrize("case", cases("idempotency.json"), ids=case_id)
def test_idempotency_scenario_async(server: Server, case: dict[str, Any]) -> None:
    run_scenario(server, case, AsyncRun)
