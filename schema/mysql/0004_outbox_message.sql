-- mintid migration 0004 (MySQL 8.0.16+, MariaDB 10.6+): the outbox table.
-- Idempotent: every statement may run again without error or change.
-- Statements end with a semicolon at the end of a line (see schema/README.md).
-- MySQL 8 has no CREATE INDEX IF NOT EXISTS: indexes are declared inside CREATE TABLE.

-- One row per business event: unique (kind, business_key). While a relay's
-- claim holds a pending message, next_attempt_millis is the claim's end and
-- claim_token identifies the claim (0: never claimed, or released for a retry).
CREATE TABLE IF NOT EXISTS outbox_message (
    message_id          BIGINT         NOT NULL,
    kind                VARBINARY(64)  NOT NULL,
    business_key        VARBINARY(255) NOT NULL,
    payload             MEDIUMBLOB     NOT NULL,
    status              VARCHAR(8) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    attempts            BIGINT         NOT NULL,
    next_attempt_millis BIGINT         NOT NULL,
    claim_token         BIGINT         NOT NULL,
    last_error          VARCHAR(1024) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NULL,
    created_millis      BIGINT         NOT NULL,
    updated_millis      BIGINT         NOT NULL,
    PRIMARY KEY (message_id),
    UNIQUE KEY outbox_message_key (kind, business_key),
    KEY outbox_message_due_idx (status, next_attempt_millis),
    KEY outbox_message_claim_idx (claim_token),
    KEY outbox_message_updated_idx (status, updated_millis),
    CONSTRAINT outbox_message_message_id_check CHECK (message_id >= 0),
    CONSTRAINT outbox_message_key_check CHECK (LENGTH(kind) >= 1 AND LENGTH(business_key) >= 1),
    CONSTRAINT outbox_message_payload_check CHECK (LENGTH(payload) <= 1048576),
    CONSTRAINT outbox_message_status_check CHECK (status IN ('pending', 'sent', 'dead')),
    CONSTRAINT outbox_message_attempts_check CHECK (attempts >= 0),
    CONSTRAINT outbox_message_claim_token_check CHECK (claim_token >= 0),
    CONSTRAINT outbox_message_last_error_check CHECK (LENGTH(last_error) <= 1024),
    CONSTRAINT outbox_message_millis_check
        CHECK (next_attempt_millis >= 0 AND created_millis >= 0 AND updated_millis >= 0)
) ENGINE = InnoDB;

INSERT INTO mintid_schema_migrations (version, name, applied_millis)
VALUES (4, 'outbox_message', CAST(UNIX_TIMESTAMP(CURRENT_TIMESTAMP(3)) * 1000 AS SIGNED))
ON DUPLICATE KEY UPDATE version = version;
