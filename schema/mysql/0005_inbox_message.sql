-- mintid migration 0005 (MySQL 8.0.16+, MariaDB 10.6+): the inbox table (idempotent consumers).
-- Idempotent: every statement may run again without error or change.
-- Statements end with a semicolon at the end of a line (see schema/README.md).
-- MySQL 8 has no CREATE INDEX IF NOT EXISTS: indexes are declared inside CREATE TABLE.

-- One row per message a consumer took: unique (consumer, message_id). The row is
-- written in the consumer's own transaction, with the handler's writes, so both
-- commit or neither does. expires_millis is received_millis plus the consumer's
-- declared retention (never shorter than its redelivery horizon: the core's rule).
CREATE TABLE IF NOT EXISTS inbox_message (
    consumer         VARBINARY(64)  NOT NULL,
    message_id       VARBINARY(255) NOT NULL,
    received_millis  BIGINT         NOT NULL,
    processed_millis BIGINT         NULL,
    expires_millis   BIGINT         NOT NULL,
    PRIMARY KEY (consumer, message_id),
    KEY inbox_message_expires_idx (expires_millis),
    CONSTRAINT inbox_message_key_check CHECK (LENGTH(consumer) >= 1 AND LENGTH(message_id) >= 1),
    CONSTRAINT inbox_message_millis_check
        CHECK (received_millis >= 0 AND processed_millis >= 0 AND expires_millis >= 0)
) ENGINE = InnoDB;

INSERT INTO mintid_schema_migrations (version, name, applied_millis)
VALUES (5, 'inbox_message', CAST(UNIX_TIMESTAMP(CURRENT_TIMESTAMP(3)) * 1000 AS SIGNED))
ON DUPLICATE KEY UPDATE version = version;
