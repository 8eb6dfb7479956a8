-- mintid migration 0001 (PostgreSQL 12+): the idempotency record table.
-- Idempotent: every statement may run again without error or change.
-- Statements end with a semicolon at the end of a line (see schema/README.md).

-- Serialises concurrent migrators until the end of the transaction: two
-- CREATE TABLE IF NOT EXISTS racing each other can fail in PostgreSQL.
SELECT pg_advisory_xact_lock(7292469616117470001);

CREATE TABLE IF NOT EXISTS mintid_schema_migrations (
    version        integer PRIMARY KEY,
    name           text    NOT NULL,
    applied_millis bigint  NOT NULL
);

CREATE TABLE IF NOT EXISTS idempotency_record (
    scope                 text COLLATE "C" NOT NULL,
    kind                  text COLLATE "C" NOT NULL,
    key_id                text COLLATE "C" NOT NULL,
    fingerprint           bytea  NOT NULL,
    status                text   NOT NULL,
    fencing_token         bigint NOT NULL,
    lease_deadline_millis bigint NOT NULL,
    response_body         bytea,
    response_content_type text,
    error                 text,
    created_millis        bigint NOT NULL,
    updated_millis        bigint NOT NULL,
    expires_millis        bigint NOT NULL,
    CONSTRAINT idempotency_record_pkey PRIMARY KEY (scope, kind, key_id),
    CONSTRAINT idempotency_record_scope_check
        CHECK (octet_length(scope) BETWEEN 1 AND 64 AND octet_length(scope) = char_length(scope)),
    CONSTRAINT idempotency_record_kind_check
        CHECK (octet_length(kind) BETWEEN 1 AND 32 AND octet_length(kind) = char_length(kind)),
    CONSTRAINT idempotency_record_key_id_check
        CHECK (octet_length(key_id) BETWEEN 1 AND 64 AND octet_length(key_id) = char_length(key_id)),
    CONSTRAINT idempotency_record_fingerprint_check CHECK (octet_length(fingerprint) = 32),
    CONSTRAINT idempotency_record_status_check
        CHECK (status IN ('pending', 'succeeded', 'failed', 'failed_retryable')),
    CONSTRAINT idempotency_record_fencing_token_check CHECK (fencing_token >= 1),
    CONSTRAINT idempotency_record_millis_check
        CHECK (lease_deadline_millis >= 0 AND created_millis >= 0 AND updated_millis >= 0
               AND expires_millis >= 0),
    CONSTRAINT idempotency_record_response_body_check
        CHECK (octet_length(response_body) <= 1048576),
    CONSTRAINT idempotency_record_response_content_type_check
        CHECK (octet_length(response_content_type) <= 255),
    CONSTRAINT idempotency_record_error_check CHECK (octet_length(error) <= 1024)
);

CREATE INDEX IF NOT EXISTS idempotency_record_expires_idx
    ON idempotency_record (expires_millis);

INSERT INTO mintid_schema_migrations (version, name, applied_millis)
VALUES (1, 'idempotency_record', CAST(EXTRACT(EPOCH FROM clock_timestamp()) * 1000 AS bigint))
ON CONFLICT (version) DO NOTHING;
