"""Runs every case of tests/conformance/ (idempotency, leases, segments,
outbox) through mintid.store.aio on PostgreSQL with asyncpg
(AsyncpgDatabase): the async runners with the other driver.
"""

from __future__ import annotations

import asyncio
from typing import Any

import asyncpg
import pytest

from mintid._native import ffi
from mintid.store.aio import AsyncpgDatabase
from mintid.store.aio._database import asyncpg_class
from store import test_store_leases, test_store_outbox, test_store_segments
from store.async_support import AsyncKit
from store.store_support import Server, case_id, cases
from store.test_store_idempotency import run_scenario
from store.test_store_idempotency_async import AsyncRun


class AsyncpgRun(AsyncRun):
    driver = "asyncpg"


@pytest.fixture
def postgres(server: Server) -> Server:
    if server.dialect != "postgres":
        pytest.skip("asyncpg is PostgreSQL's")
    return server


@pytest.mark.parametrize("case", cases("idempotency.json"), ids=case_id)
def test_idempotency_scenario_asyncpg(postgres: Server, case: dict[str, Any]) -> None:
    run_scenario(postgres, case, AsyncpgRun)


@pytest.mark.parametrize("case", cases("leases.json"), ids=case_id)
def test_lease_scenario_asyncpg(postgres: Server, case: dict[str, Any]) -> None:
    test_store_leases.run_case(postgres, case, AsyncKit("asyncpg"))


@pytest.mark.parametrize("case", cases("segments.json"), ids=case_id)
def test_segment_scenario_asyncpg(postgres: Server, case: dict[str, Any]) -> None:
    test_store_segments.run_case(postgres, case, AsyncKit("asyncpg"))


@pytest.mark.parametrize("case", cases("outbox.json"), ids=case_id)
def test_outbox_scenario_asyncpg(postgres: Server, case: dict[str, Any]) -> None:
    test_store_outbox.run_case(postgres, case, AsyncKit("asyncpg"))


def test_a_session_the_server_ended_while_idle_is_a_lost_connection(postgres: Server) -> None:
    """asyncpg answers the first query after the server ended an idle session
    with whichever error its protocol state gives (often "another operation is
    in progress"): each of them is a lost connection, so the core retries it
    on a new one instead of reporting the store failed.
    """
    make = postgres.async_factory("asyncpg")

    async def ended() -> BaseException:
        database = make()
        assert isinstance(database, AsyncpgDatabase)
        raw = await database._connect()
        try:
            await raw.execute("SELECT 1")
            postgres.kill_connections()
            await asyncio.sleep(0.05)  # the server's FATAL arrives while idle
            with pytest.raises(Exception) as raised:
                await raw.execute("SELECT 1")
            return raised.value
        finally:
            await raw.close()

    error = asyncio.run(ended())
    assert asyncpg_class(error) is ffi.DbErrorClass.CONNECTION_LOST, repr(error)


def test_asyncpg_client_errors_are_classed_by_what_they_say_of_the_connection() -> None:
    broken = asyncpg.exceptions.InternalClientError("cannot switch to state 11")
    assert asyncpg_class(broken) is ffi.DbErrorClass.CONNECTION_LOST
    stale = asyncpg.exceptions.OutdatedSchemaCacheError("cached plan", schema="s", data_type="t")
    assert asyncpg_class(stale) is ffi.DbErrorClass.OTHER
    assert asyncpg_class(asyncpg.exceptions.AdminShutdownError("ended")) is (
        ffi.DbErrorClass.CONNECTION_LOST
    )
    assert asyncpg_class(ValueError("no")) is ffi.DbErrorClass.OTHER
