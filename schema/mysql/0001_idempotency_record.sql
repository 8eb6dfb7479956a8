-- mintid migration 0001 (MySQL 8.0.16+, MariaDB 10.6+): the idempotency record table.
-- Idempotent: every statement may run again without error or change.
-- Statements end with a semicolon at the end of a line (see schema/README.md).
-- MySQL 8 has no CREATE INDEX IF NOT EXISTS: indexes are declared inside CREATE TABLE.
-- The fingerprint is VARBINARY(32) with a length check, not BINARY(32), which would
-- silently pad a short value with zero bytes.

CREATE TABLE IF NOT EXISTS mintid_schema_migrations (
    version        INT          NOT NULL PRIMARY KEY,
    name           VARCHAR(128) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    applied_millis BIGINT       NOT NULL
) ENGINE = InnoDB;

CREATE TABLE IF NOT EXISTS idempotency_record (
    id                    BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
    scope                 VARBINARY(64) NOT NULL,
    kind                  VARBINARY(32) NOT NULL,
    key_id                VARBINARY(64) NOT NULL,
    fingerprint           VARBINARY(32) NOT NULL,
    status                VARCHAR(16) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    fencing_token         BIGINT        NOT NULL,
    lease_deadline_millis BIGINT        NOT NULL,
    response_body         MEDIUMBLOB    NULL,
    response_content_type VARCHAR(255) CHARACTER SET ascii COLLATE ascii_bin NULL,
    error                 VARCHAR(1024) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NULL,
    created_millis        BIGINT        NOT NULL,
    updated_millis        BIGINT        NOT NULL,
    expires_millis        BIGINT        NOT NULL,
    PRIMARY KEY (id),
    UNIQUE KEY idempotency_record_key (scope, kind, key_id),
    KEY idempotency_record_expires_idx (expires_millis),
    CONSTRAINT idempotency_record_key_check
        CHECK (LENGTH(scope) >= 1 AND LENGTH(kind) >= 1 AND LENGTH(key_id) >= 1),
    CONSTRAINT idempotency_record_fingerprint_check CHECK (LENGTH(fingerprint) = 32),
    CONSTRAINT idempotency_record_status_check
        CHECK (status IN ('pending', 'succeeded', 'failed', 'failed_retryable')),
    CONSTRAINT idempotency_record_fencing_token_check CHECK (fencing_token >= 1),
    CONSTRAINT idempotency_record_millis_check
        CHECK (lease_deadline_millis >= 0 AND created_millis >= 0 AND updated_millis >= 0
               AND expires_millis >= 0),
    CONSTRAINT idempotency_record_response_body_check
        CHECK (LENGTH(response_body) <= 1048576),
    CONSTRAINT idempotency_record_error_check CHECK (LENGTH(error) <= 1024)
) ENGINE = InnoDB;

INSERT INTO mintid_schema_migrations (version, name, applied_millis)
VALUES (1, 'idempotency_record', CAST(UNIX_TIMESTAMP(CURRENT_TIMESTAMP(3)) * 1000 AS SIGNED))
ON DUPLICATE KEY UPDATE version = version;
