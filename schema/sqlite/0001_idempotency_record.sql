-- mintid migration 0001 (SQLite 3.37+: STRICT tables; RETURNING needs 3.35):
-- the idempotency record table.
-- Idempotent: every statement may run again without error or change.
-- Statements end with a semicolon at the end of a line (see schema/README.md).

CREATE TABLE IF NOT EXISTS mintid_schema_migrations (
    version        INTEGER PRIMARY KEY,
    name           TEXT    NOT NULL,
    applied_millis INTEGER NOT NULL
) STRICT;

CREATE TABLE IF NOT EXISTS idempotency_record (
    scope                 TEXT    NOT NULL,
    kind                  TEXT    NOT NULL,
    key_id                TEXT    NOT NULL,
    fingerprint           BLOB    NOT NULL,
    status                TEXT    NOT NULL,
    fencing_token         INTEGER NOT NULL,
    lease_deadline_millis INTEGER NOT NULL,
    response_body         BLOB,
    response_content_type TEXT,
    error                 TEXT,
    created_millis        INTEGER NOT NULL,
    updated_millis        INTEGER NOT NULL,
    expires_millis        INTEGER NOT NULL,
    CONSTRAINT idempotency_record_key UNIQUE (scope, kind, key_id),
    CONSTRAINT idempotency_record_scope_check
        CHECK (length(CAST(scope AS BLOB)) BETWEEN 1 AND 64 AND length(CAST(scope AS BLOB)) = length(scope)),
    CONSTRAINT idempotency_record_kind_check
        CHECK (length(CAST(kind AS BLOB)) BETWEEN 1 AND 32 AND length(CAST(kind AS BLOB)) = length(kind)),
    CONSTRAINT idempotency_record_key_id_check
        CHECK (length(CAST(key_id AS BLOB)) BETWEEN 1 AND 64 AND length(CAST(key_id AS BLOB)) = length(key_id)),
    CONSTRAINT idempotency_record_fingerprint_check CHECK (length(fingerprint) = 32),
    CONSTRAINT idempotency_record_status_check
        CHECK (status IN ('pending', 'succeeded', 'failed', 'failed_retryable')),
    CONSTRAINT idempotency_record_fencing_token_check CHECK (fencing_token >= 1),
    CONSTRAINT idempotency_record_millis_check
        CHECK (lease_deadline_millis >= 0 AND created_millis >= 0 AND updated_millis >= 0
               AND expires_millis >= 0),
    CONSTRAINT idempotency_record_response_body_check CHECK (length(response_body) <= 1048576),
    CONSTRAINT idempotency_record_response_content_type_check
        CHECK (length(CAST(response_content_type AS BLOB)) <= 255),
    CONSTRAINT idempotency_record_error_check CHECK (length(CAST(error AS BLOB)) <= 1024)
) STRICT;

CREATE INDEX IF NOT EXISTS idempotency_record_expires_idx
    ON idempotency_record (expires_millis);

INSERT INTO mintid_schema_migrations (version, name, applied_millis)
VALUES (1, 'idempotency_record', CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER))
ON CONFLICT (version) DO NOTHING;
