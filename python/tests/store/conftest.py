from __future__ import annotations

from collections.abc import Iterator

import pytest

from store.store_support import DIALECTS, Server


@pytest.fixture(scope="session", params=DIALECTS)
def server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Server]:
    yield Server(str(request.param), tmp_path_factory.mktemp("store"))
