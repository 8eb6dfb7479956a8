-- mintid migration 0002 (SQLite 3.37+): the worker-id lease table.
-- Idempotent: every statement may run again without error or change.
-- Statements end with a semicolon at the end of a line (see schema/README.md).

-- One row per Snowflake worker id (0 to 65535), created free by lease_seed.
-- owner is NULL while the id is free (never held, or released).
CREATE TABLE IF NOT EXISTS worker_lease (
    worker_id             INTEGER NOT NULL PRIMARY KEY,
    owner                 TEXT,
    fencing_token         INTEGER NOT NULL,
    lease_deadline_millis INTEGER NOT NULL,
    high_water_millis     INTEGER NOT NULL,
    acquired_millis       INTEGER NOT NULL,
    updated_millis        INTEGER NOT NULL,
    CONSTRAINT worker_lease_worker_id_check CHECK (worker_id BETWEEN 0 AND 65535),
    CONSTRAINT worker_lease_owner_check CHECK (length(CAST(owner AS BLOB)) BETWEEN 1 AND 255),
    CONSTRAINT worker_lease_fencing_token_check CHECK (fencing_token >= 0),
    CONSTRAINT worker_lease_millis_check
        CHECK (lease_deadline_millis >= 0 AND high_water_millis >= 0 AND acquired_millis >= 0
               AND updated_millis >= 0)
) STRICT;

INSERT INTO mintid_schema_migrations (version, name, applied_millis)
VALUES (2, 'worker_lease', CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER))
ON CONFLICT (version) DO NOTHING;
