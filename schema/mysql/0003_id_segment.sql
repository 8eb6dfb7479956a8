-- mintid migration 0003 (MySQL 8.0.16+, MariaDB 10.6+): the segment table
-- (Leaf-style ID ranges).
-- Idempotent: every statement may run again without error or change.
-- Statements end with a semicolon at the end of a line (see schema/README.md).

-- One row per tag: max_id is the largest ID handed out to any process so far.
CREATE TABLE IF NOT EXISTS id_segment (
    tag            VARBINARY(64) NOT NULL,
    max_id         BIGINT        NOT NULL,
    step           BIGINT        NOT NULL,
    created_millis BIGINT        NOT NULL,
    updated_millis BIGINT        NOT NULL,
    PRIMARY KEY (tag),
    CONSTRAINT id_segment_tag_check CHECK (LENGTH(tag) >= 1),
    CONSTRAINT id_segment_max_id_check CHECK (max_id >= 0),
    CONSTRAINT id_segment_step_check CHECK (step >= 1),
    CONSTRAINT id_segment_millis_check CHECK (created_millis >= 0 AND updated_millis >= 0)
) ENGINE = InnoDB;

INSERT INTO mintid_schema_migrations (version, name, applied_millis)
VALUES (3, 'id_segment', CAST(UNIX_TIMESTAMP(CURRENT_TIMESTAMP(3)) * 1000 AS SIGNED))
ON DUPLICATE KEY UPDATE version = version;
