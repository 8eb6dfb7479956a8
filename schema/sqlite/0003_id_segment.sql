-- mintid migration 0003 (SQLite 3.37+): the segment table (Leaf-style ID ranges).
-- Idempotent: every statement may run again without error or change.
-- Statements end with a semicolon at the end of a line (see schema/README.md).

-- One row per tag: max_id is the largest ID handed out to any process so far.
CREATE TABLE IF NOT EXISTS id_segment (
    tag            TEXT    NOT NULL PRIMARY KEY,
    max_id         INTEGER NOT NULL,
    step           INTEGER NOT NULL,
    created_millis INTEGER NOT NULL,
    updated_millis INTEGER NOT NULL,
    CONSTRAINT id_segment_tag_check
        CHECK (length(CAST(tag AS BLOB)) BETWEEN 1 AND 64 AND length(CAST(tag AS BLOB)) = length(tag)),
    CONSTRAINT id_segment_max_id_check CHECK (max_id >= 0),
    CONSTRAINT id_segment_step_check CHECK (step >= 1),
    CONSTRAINT id_segment_millis_check CHECK (created_millis >= 0 AND updated_millis >= 0)
) STRICT;

INSERT INTO mintid_schema_migrations (version, name, applied_millis)
VALUES (3, 'id_segment', CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER))
ON CONFLICT (version) DO NOTHING;
