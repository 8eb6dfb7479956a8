"""Storage: idempotency records, worker-id leases, segment IDs and the outbox
on SQLite (``sqlite3``), PostgreSQL (psycopg 3, ``mintid[postgres]``) and
MySQL/MariaDB (PyMySQL, ``mintid[mysql]``). The SQL of ``schema/`` comes from
the core's manifest; the record protocol is the core's driver, which this
package only executes. Every rule is the core's. The asyncio store is
:mod:`mintid.store.aio`.
"""  # noqa: D205

from mintid.store._clock import StoreClock, SystemStoreClock
from mintid.store._database import Database, MySqlDatabase, PostgresDatabase, SqliteDatabase
from mintid.store._errors import (
    NotAResponseError,
    RecordLostError,
    ResponseNotStorableError,
    ResponseTooLargeError,
    StaleSnapshotError,
    StoreConflictError,
    StoreError,
    StoreQueryFailedError,
    StoreSchemaMissingError,
    StoreUnavailableError,
    UnexpectedRowError,
)
from mintid.store._idempotency import (
    MAX_RESPONSE_BYTES,
    IdempotencyStore,
    OperationError,
    RecordLease,
    RunResult,
    StoredRecord,
    StoredResponse,
    StoreRequest,
)
from mintid.store._leases import LeasedSnowflake, WorkerLeaseRow, WorkerLeases
from mintid.store._metrics import StoreMetrics
from mintid.store._outbox import (
    ClaimedMessage,
    Outbox,
    OutboxMessage,
    RelayReport,
    StoredMessage,
)
from mintid.store._segments import SegmentIds

__all__ = [
    "MAX_RESPONSE_BYTES",
    "ClaimedMessage",
    "Database",
    "IdempotencyStore",
    "LeasedSnowflake",
    "MySqlDatabase",
    "NotAResponseError",
    "OperationError",
    "Outbox",
    "OutboxMessage",
    "PostgresDatabase",
    "RecordLease",
    "RecordLostError",
    "RelayReport",
    "ResponseNotStorableError",
    "ResponseTooLargeError",
    "RunResult",
    "SegmentIds",
    "SqliteDatabase",
    "StaleSnapshotError",
    "StoreClock",
    "StoreConflictError",
    "StoreError",
    "StoreMetrics",
    "StoreQueryFailedError",
    "StoreRequest",
    "StoreSchemaMissingError",
    "StoreUnavailableError",
    "StoredMessage",
    "StoredRecord",
    "StoredResponse",
    "SystemStoreClock",
    "UnexpectedRowError",
    "WorkerLeaseRow",
    "WorkerLeases",
]
