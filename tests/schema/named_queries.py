"""The shared SQL of schema/<dialect>/ as the core compiled it in, read through the
`mintid schema` command (the core's build script is the one reader of the files, and
checks their rules: schema/README.md).

Queries come rendered for the test drivers: `%s` (format) for psycopg and PyMySQL, `?`
(question) for sqlite3, with the parameter names in binding order.
"""

import json
import os
import pathlib
import subprocess
from dataclasses import dataclass
from functools import cache

ROOT = pathlib.Path(__file__).resolve().parents[2]
DIALECTS = ("postgres", "mysql", "sqlite")
KINDS = (":one", ":many", ":exec", ":execrows")
CLI = pathlib.Path(os.environ.get("MINTID_CLI", ROOT / "target" / "release" / "mintid"))


@dataclass(frozen=True)
class Query:
    """One named query: its name, result kind (`:one`, …), SQL and parameters in order."""

    name: str
    kind: str
    sql: str
    params: tuple[str, ...]


def _schema(*args: str) -> object:
    if not CLI.exists():
        raise FileNotFoundError(f"{CLI}: build it with `make cross-cli` (or set MINTID_CLI)")
    done = subprocess.run([str(CLI), "--json", "schema", *args], check=True,
                          capture_output=True, text=True)
    return json.loads(done.stdout)


def placeholder(dialect: str) -> str:
    """The placeholder style of the test driver of `dialect`."""
    return "question" if dialect == "sqlite" else "format"


@cache
def load_queries(dialect: str) -> dict[str, Query]:
    """The named queries of `dialect`, rendered for its test driver."""
    listed = _schema("queries", "--dialect", dialect, "--placeholder", placeholder(dialect))
    return {q["name"]: Query(q["name"], ":" + q["kind"], q["sql"], tuple(q["params"]))
            for q in listed}


@cache
def migrations(dialect: str) -> list[tuple[str, list[str]]]:
    """The numbered migrations of a dialect, in order, each split into statements."""
    return [(m["file"], m["statements"]) for m in _schema("migrations", "--dialect", dialect)]


@cache
def limits() -> dict[str, int]:
    """The limits the core's store drivers enforce before they write."""
    return _schema("limits")
