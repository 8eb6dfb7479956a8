-- mintid named queries for MySQL 8.0.16+ and MariaDB 10.6+.
-- Block syntax, parameters and result kinds: schema/README.md.
-- Times are Unix milliseconds from the host's clock (never the database's);
-- status texts are those of the core's Status.

-- name: claim :execrows
-- A first claim: inserts a pending record for a key that has none. Affected
-- rows 1: this call inserted it (run the operation); 0: the key already has a
-- record, or the claim's own lease had already ended at :now_millis (the core's
-- claim rule): load the record and decide again. One round trip. The duplicate
-- branch changes nothing, so it reports 0 rows only on a connection WITHOUT the
-- CLIENT_FOUND_ROWS flag (see schema/README.md); never INSERT IGNORE, which
-- would also swallow every other error. Inside a caller's transaction it waits
-- for a concurrent uncommitted claim of the same key.
INSERT INTO idempotency_record (
    scope, kind, key_id, fingerprint, status, fencing_token, lease_deadline_millis,
    created_millis, updated_millis, expires_millis)
SELECT
    :scope, :kind, :key_id, :fingerprint, 'pending', :fencing_token, :lease_deadline_millis,
    :created_millis, :created_millis, :expires_millis
FROM DUAL
WHERE CAST(:lease_deadline_millis AS SIGNED) > CAST(:now_millis AS SIGNED)
ON DUPLICATE KEY UPDATE id = id;

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
  AND CAST(:lease_deadline_millis AS SIGNED) > CAST(:now_millis AS SIGNED);

-- name: cleanup :execrows
-- Deletes at most :batch_size records past their expiry, oldest first; a pending
-- record only once its lease has passed too. Rows locked by a live request or
-- another cleaner are skipped, not waited for. Repeat while it returns
-- :batch_size. STRAIGHT_JOIN makes the server read the locked batch first and
-- delete by primary key; in the other order it scans the table with locking
-- reads and waits on the rows the batch skipped.
DELETE record
FROM (
    SELECT id FROM idempotency_record
    WHERE expires_millis <= :now_millis
      AND (status <> 'pending' OR lease_deadline_millis <= :now_millis)
    ORDER BY expires_millis
    LIMIT :batch_size
    FOR UPDATE SKIP LOCKED) AS batch
STRAIGHT_JOIN idempotency_record AS record ON record.id = batch.id;
