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
