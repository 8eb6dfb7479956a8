-- mintid migration 0003 (PostgreSQL 12+): the segment table (Leaf-style ID ranges).
-- Idempotent: every statement may run again without error or change.
-- Statements end with a semicolon at the end of a line (see schema/README.md).

SELECT pg_advisory_xact_lock(7292469616117470001);

-- One row per tag: max_id is the largest ID handed out to any process so far.
CREATE TABLE IF NOT EXISTS id_segment (
    tag            text COLLATE "C" NOT NULL,
    max_id         bigint NOT NULL,
    step           bigint NOT NULL,
    created_millis bigint NOT NULL,
    updated_millis bigint NOT NULL,
    CONSTRAINT id_segment_pkey PRIMARY KEY (tag),
    CONSTRAINT id_segment_tag_check
        CHECK (octet_length(tag) BETWEEN 1 AND 64 AND octet_length(tag) = char_length(tag)),
    CONSTRAINT id_segment_max_id_check CHECK (max_id >= 0),
    CONSTRAINT id_segment_step_check CHECK (step >= 1),
    CONSTRAINT id_segment_millis_check CHECK (created_millis >= 0 AND updated_millis >= 0)
);

INSERT INTO mintid_schema_migrations (version, name, applied_millis)
VALUES (3, 'id_segment', CAST(EXTRACT(EPOCH FROM clock_timestamp()) * 1000 AS bigint))
ON CONFLICT (version) DO NOTHING;
