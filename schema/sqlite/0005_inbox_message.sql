-- mintid migration 0005 (SQLite 3.37+): the inbox table (idempotent consumers).
-- Idempotent: every statement may run again without error or change.
-- Statements end with a semicolon at the end of a line (see schema/README.md).

-- One row per message a consumer took: unique (consumer, message_id). The row is
-- written in the consumer's own transaction, with the handler's writes, so both
-- commit or neither does. expires_millis is received_millis plus the consumer's
-- declared retention (never shorter than its redelivery horizon: the core's rule).
CREATE TABLE IF NOT EXISTS inbox_message (
    consumer         TEXT    NOT NULL,
    message_id       TEXT    NOT NULL,
    received_millis  INTEGER NOT NULL,
    processed_millis INTEGER,
    expires_millis   INTEGER NOT NULL,
    CONSTRAINT inbox_message_pkey PRIMARY KEY (consumer, message_id),
    CONSTRAINT inbox_message_consumer_check
        CHECK (length(CAST(consumer AS BLOB)) BETWEEN 1 AND 64 AND length(CAST(consumer AS BLOB)) = length(consumer)),
    CONSTRAINT inbox_message_message_id_check
        CHECK (length(CAST(message_id AS BLOB)) BETWEEN 1 AND 255),
    CONSTRAINT inbox_message_millis_check
        CHECK (received_millis >= 0 AND processed_millis >= 0 AND expires_millis >= 0)
) STRICT;

CREATE INDEX IF NOT EXISTS inbox_message_expires_idx
    ON inbox_message (expires_millis);

INSERT INTO mintid_schema_migrations (version, name, applied_millis)
VALUES (5, 'inbox_message', CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER))
ON CONFLICT (version) DO NOTHING;
