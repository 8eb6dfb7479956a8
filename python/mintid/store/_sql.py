"""The shared SQL of ``schema/`` shipped in the package: named queries and migrations.

The rules of the files (block headers, ``:name`` parameters, statement ends)
are in ``schema/README.md``; every adapter in every language reads them alike.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from importlib import resources
from importlib.abc import Traversable
from typing import Final, Literal

__all__ = ["Dialect", "Query", "load_migrations", "load_queries"]

#: The SQL dialects of ``schema/``.
Dialect = Literal["postgres", "mysql", "sqlite"]

_HEADER: Final = re.compile(r"^-- name: ([a-z][a-z0-9_]*) (:one|:many|:exec|:execrows)\s*$")
_PARAM: Final = re.compile(r"(?<![:\w]):([a-z][a-z0-9_]*)")
_MIGRATION: Final = re.compile(r"^[0-9]{4}_[a-z0-9_]+\.sql$")


@dataclass(frozen=True)
class Query:
    """One named query, its SQL already in the driver's placeholder style."""

    name: str
    #: ``:one``, ``:many``, ``:exec`` or ``:execrows``.
    kind: str
    sql: str


def _dialect_dir(dialect: Dialect) -> Traversable:
    return resources.files("mintid.store").joinpath("schema").joinpath(dialect)


def _code(text: str) -> list[str]:
    return [line for line in text.splitlines() if not line.lstrip().startswith("--")]


def load_queries(dialect: Dialect, paramstyle: Literal["named", "pyformat"]) -> dict[str, Query]:
    """The named queries of ``dialect``, parameters rewritten to ``paramstyle``."""
    text = _dialect_dir(dialect).joinpath("queries.sql").read_text(encoding="utf-8")
    blocks: list[tuple[str, str, list[str]]] = []
    for line in text.splitlines():
        header = _HEADER.match(line)
        if header:
            blocks.append((header.group(1), header.group(2), []))
        elif blocks:
            blocks[-1][2].append(line)
    queries: dict[str, Query] = {}
    for name, kind, body in blocks:
        sql = "\n".join(_code("\n".join(body))).strip().removesuffix(";").rstrip()
        if paramstyle == "pyformat":
            sql = _PARAM.sub(r"%(\1)s", sql)
        queries[name] = Query(name, kind, sql)
    return queries


def load_migrations(dialect: Dialect) -> list[tuple[str, list[str]]]:
    """The numbered migrations of ``dialect`` in order, each split into statements."""
    files = sorted(
        (entry for entry in _dialect_dir(dialect).iterdir() if _MIGRATION.match(entry.name)),
        key=lambda entry: entry.name,
    )
    result = []
    for entry in files:
        statements: list[str] = []
        current: list[str] = []
        for line in _code(entry.read_text(encoding="utf-8")):
            current.append(line)
            if line.rstrip().endswith(";"):
                statements.append("\n".join(current).strip().removesuffix(";"))
                current = []
        result.append((entry.name, statements))
    return result
