"""Runs every case of tests/conformance/leases.json, segments.json and
outbox.json through mintid.store.aio on SQLite, PostgreSQL and MariaDB: the
sync runners' scenario reading, over sync views of the async stores
(store/async_support.py).
"""

from __future__ import annotations

from typing import Any

import pytest

from store import test_store_leases, test_store_outbox, test_store_segments
from store.async_support import AsyncKit
from store.store_support import Server, case_id, cases


@pytest.mark.parametrize("case", cases("leases.json"), ids=case_id)
def test_lease_scenario_async(server: Server, case: dict[str, Any]) -> None:
    test_store_leases.run_case(server, case, AsyncKit())


@pytest.mark.parametrize("case", cases("segments.json"), ids=case_id)
def test_segment_scenario_async(server: Server, case: dict[str, Any]) -> None:
    test_store_segments.run_case(server, case, AsyncKit())


@pytest.mark.parametrize("case", cases("outbox.json"), ids=case_id)
def test_outbox_scenario_async(server: Server, case: dict[str, Any]) -> None:
    test_store_outbox.run_case(server, case, AsyncKit())
