"""Every `python` block of the docs runs as written (scripts/docs/blocks.py finds them).

The blocks of one section run in order in one namespace (a section reads top to bottom),
in a temporary directory of their own (their SQLite files go there). A section that shows
one step of a flow gets what it names from SETUP, keyed by its first block's first line:
the values a real caller would have at that point, nothing that hides a step.
"""

from __future__ import annotations

import os
import sys
import time
import uuid
from pathlib import Path
from types import SimpleNamespace

import pytest

import mintid

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts/docs"))
from blocks import Block, blocks  # type: ignore[import-not-found]  # noqa: E402


def _idempotency() -> dict[str, object]:
    return {
        "mintid": mintid,
        "request": SimpleNamespace(headers={"Idempotency-Key": str(uuid.uuid4())}),
        "body": b'{"amount": 12.5, "currency": "EUR", "meta": {"trace_id": "t-1"}}',
        "stored_record": None,  # a first request: no record yet
        "now_millis": int(time.time() * 1000),
    }


def _request_ids() -> dict[str, object]:
    return {
        "mintid": mintid,
        "secret": os.urandom(32),
        "expires_millis": int(time.time() * 1000) + 3_600_000,
        "text": mintid.uuid7_str(),
    }


def _http() -> dict[str, object]:
    from starlette.applications import Starlette
    from starlette.middleware import Middleware

    from mintid.store import IdempotencyStore, SqliteDatabase

    database = SqliteDatabase("http.sqlite3")
    database.migrate()
    return {
        "store": IdempotencyStore(database, mintid.RecordPolicy()),
        "ring": mintid.KeyRing(1, os.urandom(32)),
        "user_id": lambda raw: 42,
        "Starlette": Starlette,
        "Middleware": Middleware,
        "routes": [],
    }


SETUP = {
    "key = mintid.IdempotencyKey.from_header(": _idempotency,
    "ring = mintid.KeyRing(1, secret)  # secret: at least 32 random bytes": _request_ids,
    "from mintid.http import GrantRoute, HttpIdempotency": _http,
}
SECTIONS: dict[tuple[str, str], list[Block]] = {}
for _block in blocks("python"):
    SECTIONS.setdefault((_block.doc, _block.section), []).append(_block)


def test_every_setup_is_used() -> None:
    firsts = {section[0].text.splitlines()[0] for section in SECTIONS.values()}
    assert set(SETUP) <= firsts, f"SETUP for blocks the docs no longer have: {set(SETUP) - firsts}"


@pytest.mark.parametrize("section", SECTIONS.values(), ids=lambda section: section[0].where)
def test_the_section_runs(
    section: list[Block], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    setup = SETUP.get(section[0].text.splitlines()[0])
    namespace: dict[str, object] = {"__name__": "docs", **(setup() if setup else {})}
    for block in section:
        exec(compile(block.text, block.where, "exec"), namespace)
