-- mintid named queries for SQLite 3.37+.
-- Block syntax, parameters and result kinds: schema/README.md.
-- Times are Unix milliseconds from the host's clock (never the database's);
-- status texts are those of the core's Status.

-- name: claim :one
-- A first claim: inserts a pending record for a key that has none. Returns one
-- row when this call inserted it (run the operation); none when the key already
-- has a record, or the claim's own lease had already ended at :now_millis (the
-- core's claim rule): load the record and decide again. One statement.
INSERT INTO idempotency_record (
    scope, kind, key_id, fingerprint, status, fencing_token, lease_deadline_millis,
    created_millis, updated_millis, expires_millis)
SELECT
    :scope, :kind, :key_id, :fingerprint, 'pending', :fencing_token, :lease_deadline_millis,
    :created_millis, :created_millis, :expires_millis
WHERE CAST(:lease_deadline_millis AS BIGINT) > CAST(:now_millis AS BIGINT)
ON CONFLICT (scope, kind, key_id) DO NOTHING
RETURNING fencing_token;

-- name: load :one
-- The record of a key with its stored result, or no row.
SELECT status, fingerprint, fencing_token, lease_deadline_millis, created_millis,
       updated_millis, expires_millis, response_body, response_content_type, error
FROM idempotency_record
WHERE scope = :scope AND kind = :kind AND key_id = :key_id;

-- name: complete :execrows
-- The holder's success: stores the response. 1 row when the fence (token and
-- creation time) is the record's latest claim and it is still pending; 0 rows
-- for a stale holder (the key was reclaimed, or the record is a newer one).
UPDATE idempotency_record
SET status = 'succeeded', response_body = :response_body,
    response_content_type = :response_content_type, error = NULL,
    updated_millis = :now_millis
WHERE scope = :scope AND kind = :kind AND key_id = :key_id
  AND fencing_token = :fencing_token AND created_millis = :created_millis
  AND status = 'pending';

-- name: fail :execrows
-- The holder's final failure: stores the error (and an optional error response)
-- to replay. Guarded exactly as complete.
UPDATE idempotency_record
SET status = 'failed', response_body = :response_body,
    response_content_type = :response_content_type, error = :error,
    updated_millis = :now_millis
WHERE scope = :scope AND kind = :kind AND key_id = :key_id
  AND fencing_token = :fencing_token AND created_millis = :created_millis
  AND status = 'pending';

-- name: release :execrows
-- The holder's retryable failure: releases the key (failed_retryable) so the
-- next request runs again; keeps the token so later claims keep counting up.
-- Guarded exactly as complete.
UPDATE idempotency_record
SET status = 'failed_retryable', response_body = NULL, response_content_type = NULL,
    error = :error, updated_millis = :now_millis
WHERE scope = :scope AND kind = :kind AND key_id = :key_id
  AND fencing_token = :fencing_token AND created_millis = :created_millis
  AND status = 'pending';

-- name: renew :execrows
-- The holder's heartbeat: moves the lease deadline of its pending claim
-- forward (the core always asks for a later deadline, so the row changes and
-- the affected-row count reads the same with or without CLIENT_FOUND_ROWS).
-- 1 row: renewed; 0 rows: the fence is no longer the record's latest claim, or
-- the record is no longer pending (load it to tell which).
UPDATE idempotency_record
SET lease_deadline_millis = :lease_deadline_millis, updated_millis = :now_millis
WHERE scope = :scope AND kind = :kind AND key_id = :key_id
  AND fencing_token = :fencing_token AND created_millis = :created_millis
  AND status = 'pending' AND lease_deadline_millis < :lease_deadline_millis;

-- name: reclaim :execrows
-- A takeover (a released key, or a pending record whose lease has passed):
-- compare-and-set on the record as it was loaded (token, creation time,
-- status). 1 row: the caller holds the new token and runs the operation;
-- 0 rows: another worker won, load and decide again. A running lease is never
-- taken over, whatever the caller believes.
UPDATE idempotency_record
SET status = 'pending', fencing_token = :fencing_token,
    lease_deadline_millis = :lease_deadline_millis, response_body = NULL,
    response_content_type = NULL, error = NULL, updated_millis = :now_millis
WHERE scope = :scope AND kind = :kind AND key_id = :key_id
  AND fencing_token = :expected_token AND created_millis = :expected_created_millis
  AND status = :expected_status
  AND (status <> 'pending' OR lease_deadline_millis <= :now_millis)
  AND CAST(:lease_deadline_millis AS BIGINT) > CAST(:now_millis AS BIGINT);

-- name: cleanup :execrows
-- Deletes at most :batch_size records past their expiry, oldest first; a pending
-- record only once its lease has passed too. SQLite serialises writers, so
-- there is nothing to skip. Repeat while it returns :batch_size.
DELETE FROM idempotency_record
WHERE rowid IN (
    SELECT rowid FROM idempotency_record
    WHERE expires_millis <= :now_millis
      AND (status <> 'pending' OR lease_deadline_millis <= :now_millis)
    ORDER BY expires_millis
    LIMIT :batch_size);

-- ===================================================================================
-- Worker-id leases (table worker_lease). Acquisition is one short transaction:
-- BEGIN; lease_find; the core's acquire; lease_take; COMMIT. When lease_find finds
-- nothing: COMMIT, lease_count, and the core's none_found says whether to lease_seed
-- and start again, to pause and start again, or that no worker id is free. See
-- docs/spec.md, "Worker-id leases, segments and the outbox".
-- ===================================================================================

-- name: lease_seed :execrows
-- Creates the free rows of every worker id 0..:max_worker that has none (owner NULL,
-- token 0, deadline and high-water mark 0). Returns how many it created; run it when
-- the core's none_found says so, then start the acquisition again. Idempotent, safe
-- to run concurrently. The statement starts with INSERT (the CTE is inside) so that
-- every driver reports its row count.
INSERT INTO worker_lease (
    worker_id, owner, fencing_token, lease_deadline_millis, high_water_millis,
    acquired_millis, updated_millis)
SELECT ids.n, NULL, 0, 0, 0, 0, :now_millis
FROM (
    WITH RECURSIVE numbers (n) AS (
        SELECT 0
        UNION ALL
        SELECT n + 1 FROM numbers WHERE n < :max_worker)
    SELECT n FROM numbers) AS ids
WHERE true
ON CONFLICT (worker_id) DO NOTHING;

-- name: lease_find :one
-- Inside the acquisition's transaction, begun with BEGIN IMMEDIATE (SQLite has one
-- writer at a time, so concurrent acquisitions run one after the other): the lowest
-- worker id up to :max_worker that is free (never held, or released) or whose lease
-- has ended. No row: see lease_count.
SELECT worker_id, owner, fencing_token, lease_deadline_millis, high_water_millis
FROM worker_lease
WHERE worker_id <= :max_worker
  AND (owner IS NULL OR lease_deadline_millis <= :now_millis)
ORDER BY worker_id
LIMIT 1;

-- name: lease_find_after :one
-- lease_find for the worker ids above :after_worker: the next candidate after a row the
-- core's acquire could not use now (its high-water mark too far ahead of this clock),
-- inside the same transaction.
SELECT worker_id, owner, fencing_token, lease_deadline_millis, high_water_millis
FROM worker_lease
WHERE worker_id <= :max_worker AND worker_id > :after_worker
  AND (owner IS NULL OR lease_deadline_millis <= :now_millis)
ORDER BY worker_id
LIMIT 1;

-- name: lease_count :one
-- After lease_find found nothing (and its transaction ended): how many worker ids up
-- to :max_worker have a row (present_count) and how many of them are free or ended at
-- :now_millis (free_count), read without locks. The core's none_found turns it into
-- "seed", "retry" (free rows were locked by concurrent acquisitions) or
-- lease.no_worker_free.
SELECT COUNT(*) AS present_count,
       CAST(COALESCE(SUM(CASE WHEN owner IS NULL OR lease_deadline_millis <= :now_millis
                              THEN 1 ELSE 0 END), 0) AS INTEGER) AS free_count
FROM worker_lease
WHERE worker_id <= :max_worker;

-- name: lease_take :execrows
-- Writes the core's Acquisition by compare-and-set on the row as found (its token,
-- and still free or ended at :now_millis). 1 row: the caller holds the worker id
-- with :fencing_token; 0 rows: another process took it, start again.
UPDATE worker_lease
SET owner = :owner, fencing_token = :fencing_token,
    lease_deadline_millis = :lease_deadline_millis, high_water_millis = :high_water_millis,
    acquired_millis = :now_millis, updated_millis = :now_millis
WHERE worker_id = :worker_id AND fencing_token = :expected_token
  AND (owner IS NULL OR lease_deadline_millis <= :now_millis);

-- name: lease_renew :execrows
-- The heartbeat: extends the holder's lease and stores its high-water mark. 1 row
-- when the holder's token is still the row's and its lease has not ended at
-- :now_millis; 0 rows: the lease is lost. Never shortens a lease.
UPDATE worker_lease
SET lease_deadline_millis = :lease_deadline_millis, high_water_millis = :high_water_millis,
    updated_millis = :now_millis
WHERE worker_id = :worker_id AND fencing_token = :fencing_token AND owner IS NOT NULL
  AND lease_deadline_millis > :now_millis
  AND lease_deadline_millis < :lease_deadline_millis;

-- name: lease_release :execrows
-- Clean shutdown, after the holder stopped issuing: frees the worker id at once and
-- stores the final high-water mark (the next holder starts after it, without the
-- clock-skew wait of an expired lease). 0 rows: the lease was already lost.
UPDATE worker_lease
SET owner = NULL, lease_deadline_millis = :now_millis,
    high_water_millis = :high_water_millis, updated_millis = :now_millis
WHERE worker_id = :worker_id AND fencing_token = :fencing_token AND owner IS NOT NULL;

-- name: lease_load :one
-- One worker id's row, or no row (for operators and tests).
SELECT worker_id, owner, fencing_token, lease_deadline_millis, high_water_millis,
       acquired_millis, updated_millis
FROM worker_lease
WHERE worker_id = :worker_id;

-- ===================================================================================
-- Segments (table id_segment). A fetch is one short transaction: BEGIN;
-- segment_fetch; segment_load; COMMIT (SQLite's write lock makes the load read this
-- fetch's own result). When segment_fetch finds no row: ROLLBACK, segment_create
-- outside any transaction (two creators inside transactions deadlock on MySQL's gap
-- locks), and start again.
-- ===================================================================================

-- name: segment_create :execrows
-- Creates a tag on first use, outside any transaction: max_id 0, so its first
-- segment starts at 1. 0 rows when the tag already exists (a concurrent creator won:
-- fetch anyway).
INSERT INTO id_segment (tag, max_id, step, created_millis, updated_millis)
VALUES (:tag, 0, :step, :now_millis, :now_millis)
ON CONFLICT (tag) DO NOTHING;

-- name: segment_fetch :execrows
-- Takes the next :step IDs of the tag: max_id grows by :step atomically, so
-- concurrent fetches get disjoint segments. 1 row; 0 rows when the tag has no row
-- yet (end the transaction, segment_create, start again). The database stays
-- locked until the transaction ends.
UPDATE id_segment
SET max_id = max_id + :step, step = :step, updated_millis = :now_millis
WHERE tag = :tag;

-- name: segment_load :one
-- The tag's max_id and step: right after segment_fetch in its transaction, the
-- fetched segment is max_id - step + 1 .. max_id.
SELECT max_id, step
FROM id_segment
WHERE tag = :tag;

-- ===================================================================================
-- The outbox (table outbox_message). Enqueue runs on the caller's connection inside
-- its business transaction; a relay claims, sends outside any transaction, and marks
-- each message under its claim token.
-- ===================================================================================

-- name: outbox_enqueue :execrows
-- Inserts a pending message, due at once. 1 row: enqueued (it commits with the
-- caller's transaction); 0 rows: a message with this kind and business key already
-- exists (already enqueued, not an error). A message_id used by another message is an
-- error. Inside a transaction it waits for a concurrent uncommitted enqueue of the key.
INSERT INTO outbox_message (
    message_id, kind, business_key, payload, status, attempts, next_attempt_millis,
    claim_token, last_error, created_millis, updated_millis)
VALUES (
    :message_id, :kind, :business_key, :payload, 'pending', 0, :now_millis,
    0, NULL, :now_millis, :now_millis)
ON CONFLICT (kind, business_key) DO NOTHING;

-- name: outbox_load :one
-- The message of a kind and business key, or no row.
SELECT message_id, kind, business_key, payload, status, attempts, next_attempt_millis,
       claim_token, last_error, created_millis, updated_millis
FROM outbox_message
WHERE kind = :kind AND business_key = :business_key;

-- name: outbox_claim :execrows
-- Claims up to :batch_size pending messages due at :now_millis, oldest due first:
-- writes :claim_token, counts the attempt, and moves next_attempt_millis to
-- :claimed_until_millis (a relay that dies leaves them due again then). SQLite
-- serialises writers, so concurrent claims run one after the other and never overlap.
-- Returns how many it claimed; read them with outbox_claimed. No transaction stays
-- open while they are sent.
UPDATE outbox_message
SET claim_token = :claim_token, next_attempt_millis = :claimed_until_millis,
    attempts = attempts + 1, updated_millis = :now_millis
WHERE message_id IN (
    SELECT message_id FROM outbox_message
    WHERE status = 'pending' AND next_attempt_millis <= :now_millis
    ORDER BY next_attempt_millis, message_id
    LIMIT :batch_size);

-- name: outbox_claimed :many
-- The pending messages of a claim, in message_id order.
SELECT message_id, kind, business_key, payload, attempts, created_millis
FROM outbox_message
WHERE claim_token = :claim_token AND status = 'pending'
ORDER BY message_id;

-- name: outbox_mark_sent :execrows
-- The message was sent. 1 row while the claim token is still the message's and it
-- is pending (also after the claim's end, until another relay claims it); 0 rows:
-- the claim is lost (the core's outbox.claim_lost).
UPDATE outbox_message
SET status = 'sent', updated_millis = :now_millis
WHERE message_id = :message_id AND claim_token = :claim_token AND status = 'pending';

-- name: outbox_mark_retry :execrows
-- The send failed: the message is due again at :next_attempt_millis (the core's
-- backoff) and released from the claim. Guarded as outbox_mark_sent.
UPDATE outbox_message
SET next_attempt_millis = :next_attempt_millis, claim_token = 0, last_error = :last_error,
    updated_millis = :now_millis
WHERE message_id = :message_id AND claim_token = :claim_token AND status = 'pending';

-- name: outbox_mark_dead :execrows
-- The attempts are used up: the message is dead (kept for an operator). Guarded as
-- outbox_mark_sent.
UPDATE outbox_message
SET status = 'dead', last_error = :last_error, updated_millis = :now_millis
WHERE message_id = :message_id AND claim_token = :claim_token AND status = 'pending';

-- name: outbox_release :execrows
-- Gives the unsent messages of a claim back, due at :now_millis: a relay whose claim
-- is about to end (or has ended) before it could send them. The attempt the claim
-- counted is taken back (attempts count sends), the claim token cleared. Only the
-- claim's own pending messages are touched: one another relay claimed since keeps its
-- token. Returns how many it gave back.
UPDATE outbox_message
SET claim_token = 0, next_attempt_millis = :now_millis, attempts = attempts - 1,
    updated_millis = :now_millis
WHERE claim_token = :claim_token AND status = 'pending';

-- name: outbox_cleanup :execrows
-- Deletes at most :batch_size sent messages last updated at or before
-- :sent_before_millis, oldest first. Repeat while it returns :batch_size. Dead
-- messages are kept.
DELETE FROM outbox_message
WHERE message_id IN (
    SELECT message_id FROM outbox_message
    WHERE status = 'sent' AND updated_millis <= :sent_before_millis
    ORDER BY updated_millis
    LIMIT :batch_size);

-- ===================================================================================
-- The inbox (table inbox_message): idempotent consumers. inbox_claim and
-- inbox_processed run on the consumer's connection, inside the transaction that also
-- holds the handler's writes (the core's inbox consume driver); a redelivered message
-- whose claim committed is a duplicate and is skipped. See docs/spec.md, "Inbox".
-- ===================================================================================

-- name: inbox_claim :execrows
-- Claims a message for a consumer, expiring at :expires_millis. 1 row: the message is
-- new, run the handler; 0 rows: the consumer already took it (a duplicate). SQLite
-- serialises writers: run it inside a write transaction (BEGIN IMMEDIATE).
INSERT INTO inbox_message (consumer, message_id, received_millis, processed_millis, expires_millis)
VALUES (:consumer, :inbox_message_id, :now_millis, NULL, :expires_millis)
ON CONFLICT (consumer, message_id) DO NOTHING;

-- name: inbox_processed :execrows
-- The handler ran: the claim is marked processed at :now_millis, in the same
-- transaction. 1 row; 0 rows means the claim is not this transaction's (the core's
-- store.unexpected_row).
UPDATE inbox_message SET processed_millis = :now_millis
WHERE consumer = :consumer AND message_id = :inbox_message_id AND processed_millis IS NULL;

-- name: inbox_cleanup :execrows
-- Deletes at most :batch_size inbox rows past their expiry, oldest first. Repeat
-- while it returns :batch_size.
DELETE FROM inbox_message
WHERE rowid IN (
    SELECT rowid FROM inbox_message
    WHERE expires_millis <= :now_millis
    ORDER BY expires_millis
    LIMIT :batch_size);

-- ===================================================================================
-- State transitions (the caller's own table). Templates: {table}, {id_column} and
-- {state_column} are identifiers the core validates and quotes for the dialect
-- (mintid::transition), never text from elsewhere; the core runs transition_apply,
-- and transition_current when it wrote nothing. See docs/spec.md, "State transitions".
-- ===================================================================================

-- name: transition_apply :execrows
-- The compare-and-set: 1 row, applied; 0 rows, the row is not in :from_state (read it
-- with transition_current). :from_state and :to_state differ (the core checks), so
-- the count is the same with or without MySQL's CLIENT_FOUND_ROWS.
UPDATE {table} SET {state_column} = :to_state
WHERE {id_column} = :entity_id AND {state_column} = :from_state;

-- name: transition_current :one
-- The row's state now, or no row (the entity does not exist).
SELECT {state_column} FROM {table} WHERE {id_column} = :entity_id;

-- ===================================================================================
-- Migrations (table mintid_schema_migrations). The core's migration driver runs
-- these around the numbered files, all on one connection: migration_lock,
-- migrations_table, applied_migrations, then per pending file BEGIN IMMEDIATE;
-- applied_migrations; its statements; COMMIT; and migration_unlock at the end.
-- SQLite has no session lock: the write lock of BEGIN IMMEDIATE keeps two
-- migrators apart, and the versions read again under it say whether another one
-- applied the file first. See docs/spec.md, "Migrations".
-- ===================================================================================

-- name: migration_lock :one
-- Always locked 1: the write transaction of each file is the lock.
SELECT 1 AS locked;

-- name: migration_unlock :one
-- Nothing to give back: released 1.
SELECT 1 AS released;

-- name: migrations_table :exec
-- Creates the table of applied versions if it is missing (as migration 0001 does).
CREATE TABLE IF NOT EXISTS mintid_schema_migrations (
    version        INTEGER PRIMARY KEY,
    name           TEXT    NOT NULL,
    applied_millis INTEGER NOT NULL
) STRICT;

-- name: applied_migrations :many
-- The versions recorded as applied, ascending.
SELECT version FROM mintid_schema_migrations ORDER BY version;
