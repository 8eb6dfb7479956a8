-- mintid migration 0004 (PostgreSQL 12+): the outbox table.
-- Idempotent: every statement may run again without error or change.
-- Statements end with a semicolon at the end of a line (see schema/README.md).

SELECT pg_advisory_xact_lock(7292469616117470001);

-- One row per business event: unique (kind, business_key). While a relay's
-- claim holds a pending message, next_attempt_millis is the claim's end and
-- claim_token identifies the claim (0: never claimed, or released for a retry).
CREATE TABLE IF NOT EXISTS outbox_message (
    message_id          bigint NOT NULL,
    kind                text COLLATE "C" NOT NULL,
    business_key        text COLLATE "C" NOT NULL,
    payload             bytea  NOT NULL,
    status              text   NOT NULL,
    attempts            bigint NOT NULL,
    next_attempt_millis bigint NOT NULL,
    claim_token         bigint NOT NULL,
    last_error          text,
    created_millis      bigint NOT NULL,
    updated_millis      bigint NOT NULL,
    CONSTRAINT outbox_message_pkey PRIMARY KEY (message_id),
    CONSTRAINT outbox_message_key UNIQUE (kind, business_key),
    CONSTRAINT outbox_message_message_id_check CHECK (message_id >= 0),
    CONSTRAINT outbox_message_kind_check
        CHECK (octet_length(kind) BETWEEN 1 AND 64 AND octet_length(kind) = char_length(kind)),
    CONSTRAINT outbox_message_business_key_check
        CHECK (octet_length(business_key) BETWEEN 1 AND 255),
    CONSTRAINT outbox_message_payload_check CHECK (octet_length(payload) <= 1048576),
    CONSTRAINT outbox_message_status_check CHECK (status IN ('pending', 'sent', 'dead')),
    CONSTRAINT outbox_message_attempts_check CHECK (attempts >= 0),
    CONSTRAINT outbox_message_claim_token_check CHECK (claim_token >= 0),
    CONSTRAINT outbox_message_last_error_check CHECK (octet_length(last_error) <= 1024),
    CONSTRAINT outbox_message_millis_check
        CHECK (next_attempt_millis >= 0 AND created_millis >= 0 AND updated_millis >= 0)
);

CREATE INDEX IF NOT EXISTS outbox_message_due_idx
    ON outbox_message (status, next_attempt_millis);

CREATE INDEX IF NOT EXISTS outbox_message_claim_idx
    ON outbox_message (claim_token);

CREATE INDEX IF NOT EXISTS outbox_message_updated_idx
    ON outbox_message (status, updated_millis);

INSERT INTO mintid_schema_migrations (version, name, applied_millis)
VALUES (4, 'outbox_message', CAST(EXTRACT(EPOCH FROM clock_timestamp()) * 1000 AS bigint))
ON CONFLICT (version) DO NOTHING;
