# Independent model of docs/spec.md's "Database error classes"; prints tests/vectors/db_error.json.
# The codes come from the vendors' manuals: PostgreSQL Appendix A (SQLSTATE), MySQL/MariaDB
# server and client error references, SQLite's "Result and Error Codes".
import json

SQLSTATE = {"23505": "unique_violation", "40001": "serialization", "40P01": "serialization",
            "42P01": "schema_missing", "57P01": "connection_lost", "57P02": "connection_lost", "57P03": "connection_lost"}
MYSQL = {1062: "unique_violation", 1213: "serialization", 1205: "serialization",
         1040: "connection_lost", 1053: "connection_lost", 1927: "connection_lost",
         1406: "constraint", 3819: "constraint", 4025: "constraint", 1048: "constraint",
         1264: "constraint", 1146: "schema_missing"}
SQLITE_PRIMARY = {"BUSY": 5, "LOCKED": 6, "IOERR": 10, "CANTOPEN": 14, "CONSTRAINT": 19}
SQLITE_EXTENDED = {"CONSTRAINT_CHECK": 275, "CONSTRAINT_NOTNULL": 1299,
                   "CONSTRAINT_PRIMARYKEY": 1555, "CONSTRAINT_UNIQUE": 2067}


def by_sqlstate(state):
    if state is None or len(state) != 5 or not state.isalnum():
        return None
    if state in SQLSTATE:
        return SQLSTATE[state]
    if state[:2] == "08":
        return "connection_lost"
    if state[:2] in ("23", "22"):
        return "constraint"
    return None


def by_mysql(code):
    if code is None or not code.strip().isdigit():
        return None
    number = int(code)
    if 2000 <= number <= 2999:
        return "connection_lost"
    return MYSQL.get(number)


def sqlite_number(code):
    code = code.strip()
    if code.isdigit():
        return int(code)
    names = {"SQLITE_" + k: v for k, v in {**SQLITE_PRIMARY, **SQLITE_EXTENDED}.items()}
    matches = [n for n in names if code == n or code.startswith(n + "_")]
    return names[max(matches, key=len)] if matches else None


def by_sqlite(code):
    number = None if code is None else sqlite_number(code)
    if number is None:
        return None
    if number in (1555, 2067):
        return "unique_violation"
    return {5: "serialization", 6: "serialization", 10: "connection_lost", 14: "connection_lost",
            19: "constraint"}.get(number & 0xFF)


def sqlite_missing_table(code, message):
    # SQLite gives a missing table plain SQLITE_ERROR (1) and the message "no such table: t".
    plain = code is None or code.strip() in ("1", "SQLITE_ERROR")
    return "schema_missing" if plain and message is not None and "no such table" in message else None


def classify(dialect, code, sqlstate, message=None):
    own = {"mysql": by_mysql, "sqlite": by_sqlite, "postgres": lambda _: None}[dialect](code)
    missing = sqlite_missing_table(code, message) if dialect == "sqlite" else None
    return own or by_sqlstate(sqlstate) or missing or "other"


inputs = [
    ("postgres", None, "23505", "a unique violation"),
    ("postgres", None, "40001", "a serialization failure"),
    ("postgres", None, "40P01", "a deadlock"),
    ("postgres", None, "08006", "a connection failure (class 08)"),
    ("postgres", None, "08001", "cannot connect"),
    ("postgres", None, "57P01", "an admin shutdown"),
    ("postgres", None, "57P03", "cannot connect now"),
    ("postgres", None, "57014", "a cancelled statement"),
    ("postgres", None, "23514", "a check violation"),
    ("postgres", None, "23502", "a not-null violation"),
    ("postgres", None, "22001", "a value too long"),
    ("postgres", None, "42P01", "a missing table"),
    ("postgres", None, None, "no code at all"),
    ("postgres", "1062", None, "a MySQL number means nothing to PostgreSQL"),
    ("postgres", None, "2350", "a SQLSTATE of four characters"),
    ("postgres", None, "23-05", "a SQLSTATE with a dash"),
    ("mysql", "1062", "23000", "ER_DUP_ENTRY"),
    ("mysql", "1213", "40001", "ER_LOCK_DEADLOCK"),
    ("mysql", "1205", "HY000", "ER_LOCK_WAIT_TIMEOUT"),
    ("mysql", "2013", None, "CR_SERVER_LOST"),
    ("mysql", "2006", "HY000", "CR_SERVER_GONE_ERROR"),
    ("mysql", "2000", None, "the first client error"),
    ("mysql", "2999", None, "the last client error"),
    ("mysql", "3000", None, "past the client errors"),
    ("mysql", "1040", "08004", "ER_CON_COUNT_ERROR"),
    ("mysql", "1053", "08S01", "ER_SERVER_SHUTDOWN"),
    ("mysql", "1927", "70100", "ER_CONNECTION_KILLED (MariaDB)"),
    ("mysql", "1406", "22001", "ER_DATA_TOO_LONG"),
    ("mysql", "3819", "HY000", "ER_CHECK_CONSTRAINT_VIOLATED (MySQL)"),
    ("mysql", "4025", "23000", "ER_CONSTRAINT_FAILED (MariaDB)"),
    ("mysql", "1048", "23000", "ER_BAD_NULL_ERROR"),
    ("mysql", "1264", "22003", "ER_WARN_DATA_OUT_OF_RANGE"),
    ("mysql", "1452", "23000", "a foreign key: only its SQLSTATE names a class"),
    ("mysql", "1146", "42S02", "ER_NO_SUCH_TABLE"),
    ("mysql", None, "40001", "no number, a SQLSTATE"),
    ("mysql", "not a number", "08S01", "a number that does not parse falls back to the SQLSTATE"),
    ("mysql", None, None, "no code at all"),
    ("sqlite", "2067", None, "SQLITE_CONSTRAINT_UNIQUE by number"),
    ("sqlite", "1555", None, "SQLITE_CONSTRAINT_PRIMARYKEY by number"),
    ("sqlite", "SQLITE_CONSTRAINT_UNIQUE", None, "SQLITE_CONSTRAINT_UNIQUE by name"),
    ("sqlite", "SQLITE_CONSTRAINT_PRIMARYKEY", None, "SQLITE_CONSTRAINT_PRIMARYKEY by name"),
    ("sqlite", "275", None, "SQLITE_CONSTRAINT_CHECK by number"),
    ("sqlite", "SQLITE_CONSTRAINT_NOTNULL", None, "SQLITE_CONSTRAINT_NOTNULL by name"),
    ("sqlite", "SQLITE_CONSTRAINT_FOREIGNKEY", None, "an extended constraint code not listed"),
    ("sqlite", "787", None, "SQLITE_CONSTRAINT_FOREIGNKEY by number"),
    ("sqlite", "19", None, "SQLITE_CONSTRAINT, the primary code"),
    ("sqlite", "5", None, "SQLITE_BUSY"),
    ("sqlite", "517", None, "SQLITE_BUSY_SNAPSHOT by number"),
    ("sqlite", "SQLITE_BUSY_SNAPSHOT", None, "SQLITE_BUSY_SNAPSHOT by name"),
    ("sqlite", "SQLITE_LOCKED", None, "SQLITE_LOCKED"),
    ("sqlite", "262", None, "SQLITE_LOCKED_SHAREDCACHE"),
    ("sqlite", "SQLITE_IOERR_READ", None, "an I/O error"),
    ("sqlite", "14", None, "SQLITE_CANTOPEN"),
    ("sqlite", "1", None, "SQLITE_ERROR"),
    ("sqlite", "SQLITE_ERROR", None, "SQLITE_ERROR by name"),
    ("sqlite", "SQLITE_BUSYX", None, "a name that only starts like SQLITE_BUSY"),
    ("sqlite", None, "23505", "a SQLSTATE, which SQLite drivers rarely give, still counts"),
    ("sqlite", None, None, "no code at all"),
]
# (dialect, code, sqlstate, message, name): the message counts only for SQLite's missing table.
with_messages = [
    ("sqlite", "1", None, "no such table: mintid_records", "a missing table (SQLITE_ERROR, its message)"),
    ("sqlite", "SQLITE_ERROR", None, "no such table: main.mintid_leases",
     "a missing table by name, its message"),
    ("sqlite", None, None, "no such table: mintid_outbox", "a missing table, only its message"),
    ("sqlite", "1", None, "near \"SELEC\": syntax error", "SQLITE_ERROR with another message"),
    ("sqlite", "19", None, "no such table: t", "another code wins over the message"),
    ("postgres", None, None, "no such table: t", "the SQLite message means nothing to PostgreSQL"),
    ("mysql", None, None, "no such table: t", "the SQLite message means nothing to MySQL"),
    ("postgres", None, "42P01", "relation \"mintid_records\" does not exist",
     "a missing table with its message"),
]
cases = []
for dialect, code, sqlstate, name in inputs:
    case = {"name": f"{dialect}: {name}", "op": "classify", "dialect": dialect}
    if code is not None:
        case["code"] = code
    if sqlstate is not None:
        case["sqlstate"] = sqlstate
    case["class"] = classify(dialect, code, sqlstate)
    cases.append(case)
for dialect, code, sqlstate, message, name in with_messages:
    case = {"name": f"{dialect}: {name}", "op": "classify", "dialect": dialect}
    if code is not None:
        case["code"] = code
    if sqlstate is not None:
        case["sqlstate"] = sqlstate
    case["message"] = message
    case["class"] = classify(dialect, code, sqlstate, message)
    cases.append(case)
print(json.dumps({"description": "Database error classes (docs/spec.md, Store drivers): the class of a database error from its dialect's own code and its SQLSTATE (and, for SQLite's missing table, its message). See tests/vectors/README.md.", "cases": cases}, indent=1))
