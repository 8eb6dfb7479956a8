"""A small reader of schema/<dialect>/ files, as every adapter has one in its own language.

Named-query blocks start with ``-- name: <name> <:kind>``; full-line ``--`` comments are
documentation; parameters are ``:name`` and are rewritten to the driver's placeholder
style. Migration files are split into statements at lines that end with ``;``.
The rules are in schema/README.md.
"""

import pathlib
import re
from dataclasses import dataclass

SCHEMA_DIR = pathlib.Path(__file__).resolve().parents[2] / "schema"
DIALECTS = ("postgres", "mysql", "sqlite")
KINDS = (":one", ":many", ":exec", ":execrows")

_HEADER = re.compile(r"^-- name: ([a-z][a-z0-9_]*) (:[a-z]+)\s*$")
_PARAM = re.compile(r"(?<![:\w]):([a-z][a-z0-9_]*)")
_STRING = re.compile(r"'[^']*'")


@dataclass(frozen=True)
class Query:
    """One named query: its name, result kind and SQL with ``:name`` parameters."""

    name: str
    kind: str
    sql: str

    @property
    def params(self) -> list[str]:
        """Parameter names in order of appearance (repeats included)."""
        return _PARAM.findall(self.sql)

    def rewrite(self, style: str) -> str:
        """The SQL with the driver's placeholders: ``named`` (:name) or ``pyformat``."""
        if style == "named":
            return self.sql
        if style == "pyformat":
            return _PARAM.sub(r"%(\1)s", self.sql)
        raise ValueError(f"unknown placeholder style {style!r}")


def _code_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if not line.lstrip().startswith("--")]


def load_queries(dialect: str) -> dict[str, Query]:
    """Reads schema/<dialect>/queries.sql into named queries, checking the file's rules."""
    queries: dict[str, Query] = {}
    current: tuple[str, str] | None = None
    body: list[str] = []

    def finish() -> None:
        if current is None:
            return
        name, kind = current
        sql = "\n".join(_code_lines("\n".join(body))).strip()
        if not sql.endswith(";"):
            raise ValueError(f"{dialect} query {name}: must end with ';'")
        sql = sql[:-1].rstrip()
        if ";" in sql or "%" in sql or "?" in sql or "::" in sql:
            raise ValueError(f"{dialect} query {name}: ';', '%', '?' and '::' are not allowed")
        if any(":" in literal for literal in _STRING.findall(sql)):
            raise ValueError(f"{dialect} query {name}: ':' inside a string literal")
        if name in queries:
            raise ValueError(f"{dialect} query {name}: defined twice")
        queries[name] = Query(name, kind, sql)

    for line in (SCHEMA_DIR / dialect / "queries.sql").read_text().splitlines():
        header = _HEADER.match(line)
        if header:
            finish()
            name, kind = header.groups()
            if kind not in KINDS:
                raise ValueError(f"{dialect} query {name}: unknown result kind {kind}")
            current, body = (name, kind), []
        elif line.startswith("-- name:"):
            raise ValueError(f"{dialect}: malformed header {line!r}")
        elif current is not None:
            body.append(line)
    finish()
    return queries


def migrations(dialect: str) -> list[tuple[str, list[str]]]:
    """The numbered migrations of a dialect, in order, each split into statements."""
    result = []
    for path in sorted((SCHEMA_DIR / dialect).glob("[0-9][0-9][0-9][0-9]_*.sql")):
        statements, current = [], []
        for line in _code_lines(path.read_text()):
            current.append(line)
            if line.rstrip().endswith(";"):
                statements.append("\n".join(current).strip()[:-1])
                current = []
        if "\n".join(current).strip():
            raise ValueError(f"{path}: text after the last statement")
        result.append((path.name, statements))
    return result
