"""Runs every case of tests/conformance/ (idempotency, leases, segments,
outbox) through mintid.store.aio on PostgreSQL with asyncpg
(AsyncpgDatabase): the async runners with the other driver.
"""

from __future__ import annotations

from typing import Any

import pytest

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
