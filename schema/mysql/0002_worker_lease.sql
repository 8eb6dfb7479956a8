-- mintid migration 0002 (MySQL 8.0.16+, MariaDB 10.6+): the worker-id lease table.
-- Idempotent: every statement may run again without error or change.
-- Statements end with a semicolon at the end of a line (see schema/README.md).

-- One row per Snowflake worker id (0 to 65535), created free by lease_seed.
-- owner is NULL while the id is free (never held, or released).
CREATE TABLE IF NOT EXISTS worker_lease (
    worker_id             BIGINT       NOT NULL,
    owner                 VARBINARY(255) NULL,
    fencing_token         BIGINT       NOT NULL,
    lease_deadline_millis BIGINT       NOT NULL,
    high_water_millis     BIGINT       NOT NULL,
    acquired_millis       BIGINT       NOT NULL,
    updated_millis        BIGINT       NOT NULL,
    PRIMARY KEY (worker_id),
    CONSTRAINT worker_lease_worker_id_check CHECK (worker_id BETWEEN 0 AND 65535),
    CONSTRAINT worker_lease_owner_check CHECK (LENGTH(owner) >= 1),
    CONSTRAINT worker_lease_fencing_token_check CHECK (fencing_token >= 0),
    CONSTRAINT worker_lease_millis_check
        CHECK (lease_deadline_millis >= 0 AND high_water_millis >= 0 AND acquired_millis >= 0
               AND updated_millis >= 0)
) ENGINE = InnoDB;

INSERT INTO mintid_schema_migrations (version, name, applied_millis)
VALUES (2, 'worker_lease', CAST(UNIX_TIMESTAMP(CURRENT_TIMESTAMP(3)) * 1000 AS SIGNED))
ON DUPLICATE KEY UPDATE version = version;
