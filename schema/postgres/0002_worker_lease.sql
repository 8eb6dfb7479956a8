-- mintid migration 0002 (PostgreSQL 12+): the worker-id lease table.
-- Idempotent: every statement may run again without error or change.
-- Statements end with a semicolon at the end of a line (see schema/README.md).

SELECT pg_advisory_xact_lock(7292469616117470001);

-- One row per Snowflake worker id (0 to 65535), created free by lease_seed.
-- owner is NULL while the id is free (never held, or released).
CREATE TABLE IF NOT EXISTS worker_lease (
    worker_id             bigint NOT NULL,
    owner                 text,
    fencing_token         bigint NOT NULL,
    lease_deadline_millis bigint NOT NULL,
    high_water_millis     bigint NOT NULL,
    acquired_millis       bigint NOT NULL,
    updated_millis        bigint NOT NULL,
    CONSTRAINT worker_lease_pkey PRIMARY KEY (worker_id),
    CONSTRAINT worker_lease_worker_id_check CHECK (worker_id BETWEEN 0 AND 65535),
    CONSTRAINT worker_lease_owner_check CHECK (octet_length(owner) BETWEEN 1 AND 255),
    CONSTRAINT worker_lease_fencing_token_check CHECK (fencing_token >= 0),
    CONSTRAINT worker_lease_millis_check
        CHECK (lease_deadline_millis >= 0 AND high_water_millis >= 0 AND acquired_millis >= 0
               AND updated_millis >= 0)
);

INSERT INTO mintid_schema_migrations (version, name, applied_millis)
VALUES (2, 'worker_lease', CAST(EXTRACT(EPOCH FROM clock_timestamp()) * 1000 AS bigint))
ON CONFLICT (version) DO NOTHING;
