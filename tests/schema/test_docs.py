"""The `sql <dialect>` blocks of the docs (scripts/docs/blocks.py) run as written, each on
a fresh, migrated database of its dialect."""

import sys
from pathlib import Path

import pytest

from conftest import fresh_database

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts/docs"))
from blocks import blocks  # noqa: E402

SQL_BLOCKS = blocks("sql")


def test_every_sql_block_names_its_dialect():
    assert SQL_BLOCKS, "no sql block found: the docs or the harness moved"
    for block in SQL_BLOCKS:
        assert block.info in ("postgres", "mysql", "sqlite"), f"{block.where}: ```sql <dialect>"


@pytest.mark.parametrize("block", SQL_BLOCKS, ids=lambda block: block.where)
def test_the_block_runs(block, tmp_path):
    db = fresh_database(block.info, "mintid_schema_docs", tmp_path)()
    try:
        db.migrate()
        for statement in block.text.split(";\n"):
            code = "\n".join(line for line in statement.splitlines() if not line.strip().startswith("--"))
            if code.strip():
                db.execute(code)
    finally:
        db.close()
