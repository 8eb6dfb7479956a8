-- mintid migration 0005 (PostgreSQL 12+): the inbox table (idempotent consumers).
-- Idempotent: every statement may run again without error or change.
-- Statements end with a semicolon at the end of a line (see schema/README.md).

SELECT pg_advisory_xact_lock(7292469616117470001);

-- One row per message a consumer took: unique (consumer, message_id). The row is
-- written in the consumer's own transaction, with the handler's writes, so both
-- commit or neither does. expires_millis is received_millis plus the consumer's
-- declared retention (never shorter than its redelivery horizon: the core's rule).
CREATE TABLE IF NOT EXISTS inbox_message (
    consumer         text COLLATE "C" NOT NULL,
    message_id       text COLLATE "C" NOT NULL,
    received_millis  bigint NOT NULL,
    processed_millis bigint,
    expires_millis   bigint NOT NULL,
    CONSTRAINT inbox_message_pkey PRIMARY KEY (consumer, message_id),
    CONSTRAINT inbox_message_consumer_check
        CHECK (octet_length(consumer) BETWEEN 1 AND 64 AND octet_length(consumer) = char_length(consumer)),
    CONSTRAINT inbox_message_message_id_check CHECK (octet_length(message_id) BETWEEN 1 AND 255),
    CONSTRAINT inbox_message_millis_check
        CHECK (received_millis >= 0 AND processed_millis >= 0 AND expires_millis >= 0)
);

CREATE INDEX IF NOT EXISTS inbox_message_expires_idx
    ON inbox_message (expires_millis);

INSERT INTO mintid_schema_migrations (version, name, applied_millis)
VALUES (5, 'inbox_message', CAST(EXTRACT(EPOCH FROM clock_timestamp()) * 1000 AS bigint))
ON CONFLICT (version) DO NOTHING;
