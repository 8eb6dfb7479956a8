-- mintid migration 0004 (SQLite 3.37+): the outbox table.
-- Idempotent: every statement may run again without error or change.
-- Statements end with a semicolon at the end of a line (see schema/README.md).

-- One row per business event: unique (kind, business_key). While a relay's
-- claim holds a pending message, next_attempt_millis is the claim's end and
-- claim_token identifies the claim (0: never claimed, or released for a retry).
CREATE TABLE IF NOT EXISTS outbox_message (
    message_id          INTEGER NOT NULL PRIMARY KEY,
    kind                TEXT    NOT NULL,
    business_key        TEXT    NOT NULL,
    payload             BLOB    NOT NULL,
    status              TEXT    NOT NULL,
    attempts            INTEGER NOT NULL,
    next_attempt_millis INTEGER NOT NULL,
    claim_token         INTEGER NOT NULL,
    last_error          TEXT,
    created_millis      INTEGER NOT NULL,
    updated_millis      INTEGER NOT NULL,
    CONSTRAINT outbox_message_key UNIQUE (kind, business_key),
    CONSTRAINT outbox_message_message_id_check CHECK (message_id >= 0),
    CONSTRAINT outbox_message_kind_check
        CHECK (length(CAST(kind AS BLOB)) BETWEEN 1 AND 64 AND length(CAST(kind AS BLOB)) = length(kind)),
    CONSTRAINT outbox_message_business_key_check
        CHECK (length(CAST(business_key AS BLOB)) BETWEEN 1 AND 255),
    CONSTRAINT outbox_message_payload_check CHECK (length(payload) <= 1048576),
    CONSTRAINT outbox_message_status_check CHECK (status IN ('pending', 'sent', 'dead')),
    CONSTRAINT outbox_message_attempts_check CHECK (attempts >= 0),
    CONSTRAINT outbox_message_claim_token_check CHECK (claim_token >= 0),
    CONSTRAINT outbox_message_last_error_check CHECK (length(CAST(last_error AS BLOB)) <= 1024),
    CONSTRAINT outbox_message_millis_check
        CHECK (next_attempt_millis >= 0 AND created_millis >= 0 AND updated_millis >= 0)
) STRICT;

CREATE INDEX IF NOT EXISTS outbox_message_due_idx
    ON outbox_message (status, next_attempt_millis);

CREATE INDEX IF NOT EXISTS outbox_message_claim_idx
    ON outbox_message (claim_token);

CREATE INDEX IF NOT EXISTS outbox_message_updated_idx
    ON outbox_message (status, updated_millis);

INSERT INTO mintid_schema_migrations (version, name, applied_millis)
VALUES (4, 'outbox_message', CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER))
ON CONFLICT (version) DO NOTHING;
