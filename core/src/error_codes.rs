//! The registry of every error code: defined once here, exported through the
//! bindings (`error_codes()` in uniffi, `errorCodes()` in wasm) so that each
//! host derives or checks its typed errors against it.
//!
//! A code is `<concern>.<kind>`: the concern names the error type of one
//! module (`snowflake`, `request_id`, `store`, …) and each host has one typed
//! error per concern (Python also one class per code). The `argument.*` and
//! `internal.*` codes are the bindings' own: a value no core type can hold
//! (a negative or too large number, a byte string of the wrong length, a
//! batch too large) and a panic caught at the boundary.

use crate::record::Problem;

/// One error code of the registry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ErrorCode {
    /// The stable dotted code, e.g. `"request_id.bad_tag"`.
    pub code: &'static str,
    /// The HTTP problem a request failing with this code is answered with,
    /// when the code is the client's fault (`None`: the server's own fault,
    /// or no HTTP meaning).
    pub problem: Option<Problem>,
    /// Whether a host can meet this code (`false` for the Rust-only
    /// `base64url.*` codes, which the core maps to its own before they leave,
    /// and for the `inbox.*`, `transition.*` and `webhook.*` codes until the
    /// Python, JS and JVM hosts have their typed errors: only the Rust store
    /// meets them yet).
    pub host: bool,
    /// What the code means, in one sentence; an error's message adds the
    /// offending value.
    pub summary: &'static str,
    /// The message of an error of this code, with a named field in braces
    /// (`{limit}`) for each value the error fills in: an error's `Display` is
    /// this template filled.
    pub template: &'static str,
}

impl ErrorCode {
    /// The concern: the part of the code before its dot (`"request_id"`).
    pub fn concern(&self) -> &'static str {
        self.code
            .split_once('.')
            .map_or(self.code, |(concern, _)| concern)
    }
}

const fn entry(
    code: &'static str,
    problem: Option<Problem>,
    host: bool,
    summary: &'static str,
    template: &'static str,
) -> ErrorCode {
    ErrorCode {
        code,
        problem,
        host,
        summary,
        template,
    }
}

/// Every error code, sorted by code.
pub const ERROR_CODES: &[ErrorCode] = &[
    entry(
        "argument.batch_too_large",
        None,
        true,
        "A bulk request for more IDs than one call may make.",
        "a batch holds at most {max} IDs, asked for {count}",
    ),
    entry(
        "argument.byte_length",
        None,
        true,
        "A byte string of the wrong length.",
        "{what} must be {expected} bytes, got {found}",
    ),
    entry(
        "argument.negative",
        None,
        true,
        "A negative number where only non-negative ones make sense (a time, a duration, a count).",
        "{what} must not be negative, got {value}",
    ),
    entry(
        "argument.out_of_range",
        None,
        true,
        "An integer outside the range of its field (for example beyond 64 bits).",
        "{what} must {bound}, got {value}",
    ),
    entry(
        "base64url.invalid_character",
        None,
        false,
        "A character outside the base64url alphabet (padding included).",
        "invalid base64url {character} at position {position}",
    ),
    entry(
        "base64url.invalid_length",
        None,
        false,
        "A base64url text whose length no byte string has.",
        "base64url text of {length} characters is impossible (length is 1 mod 4)",
    ),
    entry(
        "base64url.non_canonical",
        None,
        false,
        "Unused low bits that are not zero in the last character.",
        "base64url character at position {position} has non-zero unused bits",
    ),
    entry(
        "base64url.wrong_length",
        None,
        false,
        "A base64url text that decodes to the wrong number of bytes.",
        "base64url text decodes to {found} bytes, expected {expected}",
    ),
    entry(
        "fingerprint.duplicate_member",
        None,
        true,
        "An object names a member twice.",
        "duplicate member name {name} at byte {position}",
    ),
    entry(
        "fingerprint.invalid_json",
        None,
        true,
        "The payload is not JSON (or has a value JSON cannot hold, such as NaN).",
        "invalid JSON: {reason} at byte {position}",
    ),
    entry(
        "fingerprint.invalid_pointer",
        None,
        true,
        "A field selection that is not a JSON Pointer.",
        "JSON Pointer {reason}",
    ),
    entry(
        "fingerprint.invalid_text",
        None,
        true,
        "A text that is not `sha256:` and 43 base64url characters.",
        "a fingerprint must be 'sha256:' and 43 base64url characters, found {text}",
    ),
    entry(
        "fingerprint.invalid_utf8",
        None,
        true,
        "The payload is not UTF-8.",
        "invalid UTF-8 at byte {position}",
    ),
    entry(
        "fingerprint.lone_surrogate",
        None,
        true,
        "A string escapes half of a UTF-16 surrogate pair.",
        "lone surrogate escape U+{unit} at byte {position}",
    ),
    entry(
        "fingerprint.number_out_of_range",
        None,
        true,
        "A number beyond what every language reads exactly.",
        "{reason} {number} at byte {position}",
    ),
    entry(
        "fingerprint.string_value",
        None,
        true,
        "A value to fingerprint that is one string (JSON text goes to `fingerprint_json`).",
        "a value to fingerprint is one string, which could be meant as JSON text; pass JSON text to fingerprint_json, found {text}",
    ),
    entry(
        "fingerprint.too_deep",
        None,
        true,
        "The payload nests deeper than the core allows.",
        "objects and arrays nested deeper than {max_depth} levels at byte {position}",
    ),
    entry(
        "http.bad_stored_response",
        None,
        true,
        "Stored bytes that are not a `mintid-http/1` envelope; `position` says where.",
        "the stored response is not a mintid-http/1 envelope: {reason} at byte {position}",
    ),
    entry(
        "http.body_consumed",
        None,
        true,
        "A covered request whose body something else read before the idempotency middleware (a body parser mounted first): refused rather than fingerprinted as empty; the server's configuration.",
        "the request declares a body ({declared}) but something read it before the idempotency middleware, which found {read} bytes left: it cannot be fingerprinted, and an empty fingerprint would replay another body's answer; {fix}",
    ),
    entry(
        "http.invalid_header",
        None,
        true,
        "A header to store whose name is no token or whose value holds CR, LF or NUL.",
        "the header {name}{excerpt} cannot be stored: {reason}",
    ),
    entry(
        "http.invalid_method",
        None,
        true,
        "A method that cannot name a default key kind.",
        "the method {method}{excerpt} cannot name a key kind: it must be 1 to 16 ASCII letters, digits, '-', '_' or '.'",
    ),
    entry(
        "http.invalid_status",
        None,
        true,
        "A status outside 100-599, or without a plain-status problem.",
        "the status {status} {reason}",
    ),
    entry(
        "http.malformed_body",
        Some(Problem::MalformedBody),
        true,
        "A JSON content type with a body that is not JSON (`problem_name` `malformed_body`, 400); `position` says where it stops being JSON.",
        "the content type is JSON but the body is not: {cause}",
    ),
    entry(
        "http.missing_key",
        Some(Problem::MissingKey),
        true,
        "A covered request without a header the route accepts a key from; the detail names the accepted header(s).",
        "no idempotency key: this route takes it from {expected}{ignored}",
    ),
    entry(
        "http.unauthenticated",
        None,
        true,
        "A covered request whose caller the scope function could not name (no logged-in user or tenant): answered 401, before any key is read.",
        "the request has no authenticated caller (the scope function found none): idempotency keys are kept per caller; log in, then send it again",
    ),
    entry(
        "inbox.invalid_message",
        None,
        false,
        "A consumer name or message id outside the inbox table's limits.",
        "invalid inbox message: {field} {value} {reason}",
    ),
    entry(
        "inbox.invalid_policy",
        None,
        false,
        "An inbox retention of 0, or a duration above 100 years.",
        "invalid inbox policy: {field} must be {rule}, got {value}",
    ),
    entry(
        "inbox.retention_too_short",
        None,
        false,
        "An inbox retention shorter than the redelivery horizon the caller declared.",
        "inbox retention {retention_millis} ms is shorter than the redelivery horizon {redelivery_horizon_millis} ms: a message redelivered after its row is deleted would run again",
    ),
    entry(
        "internal.panic",
        None,
        true,
        "The native library failed unexpectedly; please report it.",
        "the core panicked (a bug: please report it)",
    ),
    entry(
        "key.empty",
        None,
        true,
        "A part of the key (or the header value) is empty.",
        "{part} is empty",
    ),
    entry(
        "key.invalid_character",
        None,
        true,
        "A character a part of the key may not hold.",
        "{character} at position {position} of the {part} is not allowed ({allowed})",
    ),
    entry(
        "key.invalid_header",
        None,
        true,
        "An `Idempotency-Key` header value that is not a valid string.",
        "invalid Idempotency-Key header: {reason} at position {position}",
    ),
    entry(
        "key.invalid_text",
        None,
        true,
        "A text that is not `kind:scope:id`.",
        "invalid idempotency key text: {reason}",
    ),
    entry(
        "key.too_long",
        None,
        true,
        "A part of the key is longer than its column allows.",
        "the {part} of an idempotency key is {length} bytes long, at most {limit} allowed",
    ),
    entry(
        "lease.acquire_timeout",
        None,
        true,
        "No worker id could be taken within the caller's timeout.",
        "no worker id could be taken by the deadline {deadline_millis} ms: {reason}",
    ),
    entry(
        "lease.clock_behind",
        None,
        true,
        "The clock reads earlier than the last renewal.",
        "a renewal now would end the lease at {renewed_deadline_millis} ms, not after its deadline {deadline_millis} ms: the clock went back",
    ),
    entry(
        "lease.expired",
        None,
        true,
        "At or past the stop point: renew first.",
        "the lease ended at {stop_at_millis} ms (no renewal in time) and {at_millis} ms is past it: acquire a new lease",
    ),
    entry(
        "lease.foreign_id",
        None,
        true,
        "An ID of another worker id, or from before the start point.",
        "the ID {reason}",
    ),
    entry(
        "lease.high_water_ahead",
        None,
        true,
        "The new holder would wait too long before it is ready.",
        "worker id {worker_id} may issue only from {ready_at_millis} ms, {wait_millis} ms after now ({now_millis} ms), more than the {max_wait_millis} ms a new holder may wait: is this clock behind?",
    ),
    entry(
        "lease.invalid_policy",
        None,
        true,
        "A lease policy whose values do not fit together.",
        "invalid lease policy: {field} {reason}",
    ),
    entry(
        "lease.lost",
        None,
        true,
        "The lease was lost: stop issuing.",
        "the lease on worker id {worker_id} (token {fencing_token}) is lost: another process holds it now",
    ),
    entry(
        "lease.no_worker_free",
        None,
        true,
        "Every worker id is held by a live lease.",
        "no worker id is free: all of 0..={max_worker} are held by live leases",
    ),
    entry(
        "lease.not_ready",
        None,
        true,
        "Before the holder's ready time.",
        "the lease may issue only from {ready_at_millis} ms on; now is {now_millis} ms",
    ),
    entry(
        "lease.released",
        None,
        true,
        "The lease was released.",
        "the lease on worker id {worker_id} was released",
    ),
    entry(
        "lease.still_held",
        None,
        true,
        "The lease of the row is still running.",
        "worker id {worker_id} is still held: its lease runs until {lease_deadline_millis} ms, now is {now_millis} ms",
    ),
    entry(
        "lease.time_overflow",
        None,
        true,
        "A time plus a duration passes 2^64 milliseconds.",
        "time {millis} ms plus {duration_millis} ms does not fit in 64 bits",
    ),
    entry(
        "lease.token_exhausted",
        None,
        true,
        "The fencing token cannot be bumped further.",
        "the fencing token of worker id {worker_id} is at its maximum and cannot be bumped",
    ),
    entry(
        "lease.worker_out_of_range",
        None,
        true,
        "A worker id above the policy's range.",
        "stored worker id {worker_id} is out of the layout's range 0..={max_worker}",
    ),
    entry(
        "outbox.claim_lost",
        None,
        true,
        "The claim ended and another relay took the message.",
        "claim {claim_token} on message {message_id} is lost: it ended and another relay claimed the message, or the message is no longer pending",
    ),
    entry(
        "outbox.invalid_message",
        None,
        true,
        "A message that may not be enqueued.",
        "invalid outbox message: {field} {reason}",
    ),
    entry(
        "outbox.invalid_policy",
        None,
        true,
        "A relay policy whose values do not fit together.",
        "invalid relay policy: {field} {reason}",
    ),
    entry(
        "outbox.time_overflow",
        None,
        true,
        "A time plus a duration passes 2^64 milliseconds.",
        "time {millis} ms plus {duration_millis} ms does not fit in 64 bits",
    ),
    entry(
        "outbox.unexpected_rows",
        None,
        true,
        "An affected-row count the rules do not allow.",
        "{statement} affected {rows} rows, which its guarantees rule out (is CLIENT_FOUND_ROWS set on a MySQL connection?)",
    ),
    entry(
        "outbox.unknown_status",
        None,
        true,
        "A stored status text the core does not know.",
        "unknown outbox status {status}{excerpt}: expected pending, sent or dead",
    ),
    entry(
        "record.claim_conflict",
        None,
        true,
        "The record changed since it was loaded: load it and decide again.",
        "the record changed since it was loaded (another worker claimed the key): load it and decide again",
    ),
    entry(
        "record.claim_expired",
        None,
        true,
        "The claim's own lease ended before it was written.",
        "the claim's lease ended at {lease_deadline_millis} ms before it was written: load the record and decide again",
    ),
    entry(
        "record.invalid_policy",
        None,
        true,
        "A record policy whose values do not fit together.",
        "invalid record policy: {field} {reason}",
    ),
    entry(
        "record.not_pending",
        None,
        true,
        "The claim already ended: the record is no longer pending.",
        "the record is no longer pending: its status is already {status}",
    ),
    entry(
        "record.stale_token",
        None,
        true,
        "A fence older than the record's latest claim: the key was reclaimed since.",
        "stale fencing token {token} (record created at {created_millis} ms): {reason}",
    ),
    entry(
        "record.time_overflow",
        None,
        true,
        "A time plus the lease or retention passes 2^64 milliseconds.",
        "time {millis} ms plus {duration_millis} ms does not fit in 64 bits",
    ),
    entry(
        "record.token_exhausted",
        None,
        true,
        "The fencing token cannot be bumped further.",
        "the fencing token is at its maximum (2^64 - 1) and cannot be bumped",
    ),
    entry(
        "record.unknown_status",
        None,
        true,
        "A stored status text the core does not know.",
        "unknown record status {status}{excerpt}: expected pending, succeeded, failed or failed_retryable",
    ),
    entry(
        "request_id.bad_tag",
        Some(Problem::InvalidRequestId),
        true,
        "The tag does not verify: forged, or minted for another scope.",
        "request ID tag does not match: forged, altered, or minted for another scope",
    ),
    entry(
        "request_id.current_key",
        None,
        true,
        "The current key cannot be retired.",
        "key {key_id} is the current key and cannot be retired: rotate to another first",
    ),
    entry(
        "request_id.duplicate_key_id",
        None,
        true,
        "A key id the ring already holds.",
        "the key ring already holds a key with id {key_id}",
    ),
    entry(
        "request_id.expiry_out_of_range",
        None,
        true,
        "An expiry at or beyond 2^48 milliseconds.",
        "expiry {expires_millis} ms does not fit in 48 bits (must be below {limit})",
    ),
    entry(
        "request_id.grant_expired",
        Some(Problem::GrantExpired),
        true,
        "The grant the ID was minted from has expired.",
        "the request ID's grant expired at {expires_millis} ms (now {now_millis} ms)",
    ),
    entry(
        "request_id.in_future",
        Some(Problem::InvalidRequestId),
        true,
        "The ID is further ahead of the clock than the skew bound allows.",
        "request ID minted at {minted_millis} ms is more than {max_skew_millis} ms ahead of now ({now_millis} ms)",
    ),
    entry(
        "request_id.invalid_scope",
        None,
        true,
        "A scope that is empty or longer than 64 bytes.",
        "a scope must be 1 to {limit} bytes long, found {length}",
    ),
    entry(
        "request_id.malformed",
        Some(Problem::InvalidRequestId),
        true,
        "The text is not a request ID of any known form.",
        "malformed request ID: {reason}",
    ),
    entry(
        "request_id.malformed_grant",
        None,
        true,
        "The text is not a grant.",
        "malformed grant: {reason}",
    ),
    entry(
        "request_id.too_old",
        Some(Problem::KeyTooOld),
        true,
        "The ID is older than the freshness bound allows.",
        "request ID minted at {minted_millis} ms is older than {max_age_millis} ms (now {now_millis} ms)",
    ),
    entry(
        "request_id.unknown_key",
        Some(Problem::InvalidRequestId),
        true,
        "The key id is not in the key ring.",
        "unknown key id {key_id}",
    ),
    entry(
        "request_id.unsupported_version",
        Some(Problem::InvalidRequestId),
        true,
        "A signed request ID of a format version this core does not read.",
        "{reason}",
    ),
    entry(
        "request_id.weak_secret",
        None,
        true,
        "A server secret shorter than 32 bytes.",
        "a server secret must have at least {limit} bytes, found {length}",
    ),
    entry(
        "segment.invalid_policy",
        None,
        true,
        "A segment policy whose values do not fit together.",
        "invalid segment policy: {field} {reason}",
    ),
    entry(
        "segment.invalid_row",
        None,
        true,
        "A fetched row that is not a segment.",
        "fetched row (max_id {max_id}, step {step}) is not a segment of the requested step {requested} (need 1 ≤ step ≤ max_id ≤ 2^63 - 1)",
    ),
    entry(
        "segment.invalid_tag",
        None,
        true,
        "A segment tag that is not 1 to 64 bytes of ASCII.",
        "a segment tag is 1 to 64 bytes of ASCII, this one is {length} bytes or not ASCII",
    ),
    entry(
        "segment.no_fetch",
        None,
        true,
        "A fetch reported that was not asked for.",
        "a fetch result arrived while no fetch was in flight",
    ),
    entry(
        "segment.went_back",
        None,
        true,
        "A fetched segment below the previous one.",
        "fetched segment starts at {first}, not above {highest} already held: was the tag's row reset?",
    ),
    entry(
        "snowflake.clock_rolled_back",
        None,
        true,
        "The clock went back further than the rollback policy tolerates.",
        "the clock is {behind_millis} ms behind the last ID issued; the rollback policy tolerates {tolerance_millis} ms",
    ),
    entry(
        "snowflake.epoch_in_future",
        None,
        true,
        "The clock reads a time before the layout's epoch.",
        "the clock reads {now_millis} ms, before the layout's epoch {epoch_millis} ms",
    ),
    entry(
        "snowflake.forked",
        None,
        true,
        "A generator inherited across `fork()` needs its own worker id.",
        "{reason}",
    ),
    entry(
        "snowflake.id_out_of_range",
        None,
        true,
        "An ID has the sign bit set or bits the layout does not have.",
        "ID {id} is out of range: {limit}",
    ),
    entry(
        "snowflake.invalid_layout",
        None,
        true,
        "The bit counts, tick or epoch do not make a usable layout.",
        "invalid Snowflake layout: {reason}",
    ),
    entry(
        "snowflake.invalid_text",
        None,
        true,
        "The text of an ID is neither decimal nor 13 Crockford base32 digits.",
        "{reason}",
    ),
    entry(
        "snowflake.sequence_out_of_range",
        None,
        true,
        "A sequence number does not fit its field.",
        "sequence {value} is out of range 0..={max}",
    ),
    entry(
        "snowflake.time_exhausted",
        None,
        true,
        "The layout's time field has run out.",
        "the layout's time field ran out at {end_millis} ms: no more IDs can be issued",
    ),
    entry(
        "snowflake.time_out_of_range",
        None,
        true,
        "A time or tick lies before the epoch or past the end of the layout.",
        "{time} {reason}",
    ),
    entry(
        "snowflake.unknown_preset",
        None,
        true,
        "No preset layout has the given name.",
        "unknown Snowflake layout preset {name} (known: {known})",
    ),
    entry(
        "snowflake.wait_exceeded",
        None,
        true,
        "The generator waited as long as it may for the clock.",
        "paused {paused_micros} µs waiting for the clock to reach {target_millis} ms; it still reads {now_millis} ms",
    ),
    entry(
        "snowflake.worker_out_of_range",
        None,
        true,
        "A worker (or datacenter) id does not fit its field.",
        "{field} {value} is out of range 0..={max}",
    ),
    entry(
        "store.conflict",
        Some(Problem::StorageUnavailable),
        true,
        "The database kept reporting serialization failures or deadlocks; nothing was run.",
        "the database kept reporting serialization failures or deadlocks",
    ),
    entry(
        "store.not_a_response",
        None,
        true,
        "The operation returned something that is not a :class:`~mintid.store.StoredResponse`: the claim was released, nothing stored.",
        "the operation returned a {type_name}, not a response: the claim was released",
    ),
    entry(
        "store.query_failed",
        Some(Problem::StorageUnavailable),
        true,
        "A store query failed for another reason (a constraint, a permission, a syntax error).",
        "{reason}",
    ),
    entry(
        "store.record_lost",
        None,
        true,
        "A renewal of the record's lease found the key taken over or completed: the operation no longer holds its record.",
        "the record's lease was lost: the key was taken over or completed",
    ),
    entry(
        "store.response_not_storable",
        None,
        true,
        "The response's content type is over 255 bytes or not printable ASCII: stored as a final failure, as for :class:`ResponseTooLargeError`.",
        "the response's content type ({length} bytes) is over {limit} bytes or not printable ASCII",
    ),
    entry(
        "store.response_too_large",
        None,
        true,
        "The operation's response is over the 1 MiB limit: it ran, the response is not stored, and its key replays this error (a stored final failure).",
        "the response has {length} bytes, more than the {limit} stored",
    ),
    entry(
        "store.schema_missing",
        Some(Problem::StorageUnavailable),
        true,
        "A mintid table does not exist (PostgreSQL 42P01, MySQL/MariaDB 1146, SQLite \"no such table\"): the store's schema was never migrated; each host's error names its migrate call.",
        "a mintid table does not exist: the store's schema was not migrated",
    ),
    entry(
        "store.stale_snapshot",
        Some(Problem::StorageUnavailable),
        true,
        "A claim neither inserted its record nor found the one in the way, round after round: the caller's transaction reads an old snapshot (MySQL or MariaDB `REPEATABLE READ` after an earlier read of the table). Nothing was run; claim before reading, or use `READ COMMITTED`.",
        "the claim neither inserted nor found its record {rounds} times: the transaction reads an old snapshot (claim before reading, or use READ COMMITTED)",
    ),
    entry(
        "store.unavailable",
        Some(Problem::StorageUnavailable),
        true,
        "The database cannot be reached or the connection broke: before the claim was written nothing ran; after the operation ran, its record stays pending until its lease passes.",
        "the database {reason}",
    ),
    entry(
        "store.unexpected_row",
        Some(Problem::StorageUnavailable),
        true,
        "A row the core cannot read: the schema is not the one it expects.",
        "{reason}",
    ),
    entry(
        "transition.invalid_identifier",
        None,
        false,
        "A table or column name the core will not put into SQL.",
        "identifier {identifier} {reason}",
    ),
    entry(
        "transition.invalid_table",
        None,
        false,
        "A transition table that cannot be used.",
        "invalid transition table: {reason}",
    ),
    entry(
        "transition.not_allowed",
        None,
        false,
        "A move the transition table does not allow.",
        "the transition table does not allow {from} -> {to}",
    ),
    entry(
        "transition.not_found",
        None,
        false,
        "No row has the entity's id.",
        "no row of {table} has this {id_column}",
    ),
    entry(
        "transition.unknown_state",
        None,
        false,
        "A state the transition table does not declare.",
        "state {state} is not in the transition table",
    ),
    entry(
        "uuid.base32_overflow",
        None,
        true,
        "A base32 text whose value needs more than 128 bits.",
        "base32 UUID text must start with a digit from 0 to 7, found {first} (the value would need more than 128 bits)",
    ),
    entry(
        "uuid.invalid_character",
        None,
        true,
        "A character that does not belong where it is.",
        "invalid character {character} at position {position} of UUID text (expected {expected})",
    ),
    entry(
        "uuid.invalid_length",
        None,
        true,
        "The text is not 36, 32, 45 or 26 characters long.",
        "UUID text must be 36 (hyphenated), 32 (simple), 45 (URN) or 26 (base32) characters long, found {length}",
    ),
    entry(
        "uuid7.buffer_length",
        None,
        true,
        "A byte buffer whose length is not a multiple of 16.",
        "a UUIDv7 byte buffer must hold 16 bytes per ID, but its length {length} is not a multiple of 16",
    ),
    entry(
        "uuid7.clock_rollback",
        None,
        true,
        "The clock went back further than the rollback policy tolerates.",
        "the clock went back {behind_millis} ms{outcome}",
    ),
    entry(
        "uuid7.invalid_text",
        None,
        true,
        "The text is not a UUID in any of the four forms.",
        "invalid UUIDv7 text: {cause}",
    ),
    entry(
        "uuid7.rand_a_out_of_range",
        None,
        true,
        "A `rand_a` above 2^12 - 1.",
        "UUIDv7 rand_a {rand_a} does not fit 12 bits (maximum 0xfff)",
    ),
    entry(
        "uuid7.rand_b_out_of_range",
        None,
        true,
        "A `rand_b` above 2^62 - 1.",
        "UUIDv7 rand_b {rand_b} does not fit 62 bits (maximum 0x3fffffffffffffff)",
    ),
    entry(
        "uuid7.timestamp_out_of_range",
        None,
        true,
        "A Unix millisecond timestamp above 2^48 - 1.",
        "UUIDv7 timestamp {unix_millis} ms does not fit 48 bits (maximum {max})",
    ),
    entry(
        "uuid7.timestamp_overflow",
        None,
        true,
        "The 48-bit timestamp is used up.",
        "the 48-bit UUIDv7 timestamp is used up (clock reads {clock_millis} ms, the last usable millisecond is {max})",
    ),
    entry(
        "uuid7.wrong_variant",
        None,
        true,
        "A version 7 field without the RFC 9562 variant.",
        "expected the RFC 9562 variant (10xx), found the {variant} variant",
    ),
    entry(
        "uuid7.wrong_version",
        None,
        true,
        "A UUID of another version than 7.",
        "expected version 7, found {version}",
    ),
    entry(
        "webhook.invalid_body",
        None,
        false,
        "A webhook body that is not JSON, where the key is read from it.",
        "the webhook body is not JSON: {reason}",
    ),
    entry(
        "webhook.invalid_pointer",
        None,
        false,
        "A key's JSON Pointer that is not valid.",
        "invalid key pointer: {reason}",
    ),
    entry(
        "webhook.invalid_secret",
        None,
        false,
        "An empty webhook secret.",
        "the webhook secret must not be empty",
    ),
    entry(
        "webhook.key_missing",
        None,
        false,
        "Nothing, or an empty string, at the key's JSON Pointer in the body.",
        "the webhook body has no key at {pointer}",
    ),
    entry(
        "webhook.key_not_scalar",
        None,
        false,
        "An object, array, boolean or null at the key's JSON Pointer.",
        "the webhook key at {pointer} must be a string or a number, found {found}",
    ),
    entry(
        "webhook.key_too_long",
        None,
        false,
        "A key read from the body above 255 bytes.",
        "the webhook key at {pointer} is {length} bytes, more than 255",
    ),
    entry(
        "webhook.signature_expired",
        None,
        false,
        "A signature timestamp outside the tolerance.",
        "the webhook signature's timestamp {timestamp} s is more than {tolerance_millis} ms from now ({now_millis} ms)",
    ),
    entry(
        "webhook.signature_malformed",
        None,
        false,
        "A signature header not in the scheme's form.",
        "the webhook signature is not of the form {form}",
    ),
    entry(
        "webhook.signature_mismatch",
        None,
        false,
        "A signature that does not match the raw body.",
        "the webhook signature does not match the body",
    ),
    entry(
        "webhook.signature_missing",
        None,
        false,
        "A webhook without a signature header.",
        "the webhook has no signature",
    ),
];

/// The registry entry of `code`, if it is one.
pub fn error_code(code: &str) -> Option<&'static ErrorCode> {
    ERROR_CODES
        .binary_search_by(|entry| entry.code.cmp(code))
        .ok()
        .map(|index| &ERROR_CODES[index])
}

#[cfg(test)]
mod samples;

#[cfg(test)]
mod tests {
    extern crate std;

    use super::*;
    use std::collections::BTreeSet;
    use std::string::String;
    use std::vec::Vec;

    /// The code literals of Rust sources under `dir`: a dotted string after a match arrow.
    fn codes_in(dir: &std::path::Path, found: &mut BTreeSet<String>) {
        for entry in std::fs::read_dir(dir).expect("a source directory") {
            let path = entry.expect("an entry").path();
            if path.is_dir() {
                codes_in(&path, found);
            } else if path.extension().is_some_and(|ext| ext == "rs") {
                let text = std::fs::read_to_string(&path).expect("a source file");
                for piece in text.split("=> \"").skip(1) {
                    let code = piece.split('"').next().unwrap_or_default();
                    let dotted = code.split_once('.').is_some_and(|(concern, kind)| {
                        !concern.is_empty()
                            && !kind.is_empty()
                            && code
                                .bytes()
                                .all(|b| b.is_ascii_lowercase() || b"._0123456789".contains(&b))
                    });
                    if dotted {
                        found.insert(String::from(code));
                    }
                }
            }
        }
    }

    #[test]
    fn sorted_unique_and_dotted() {
        let codes: Vec<&str> = ERROR_CODES.iter().map(|entry| entry.code).collect();
        assert!(
            codes.windows(2).all(|pair| pair[0] < pair[1]),
            "sorted, unique"
        );
        for entry in ERROR_CODES {
            assert!(entry.code.contains('.'), "{}", entry.code);
            assert!(!entry.summary.is_empty(), "{}", entry.code);
            assert_eq!(error_code(entry.code), Some(entry));
        }
        assert_eq!(error_code("nope.nope"), None);
    }

    #[test]
    fn every_code_the_core_makes_is_registered() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut found = BTreeSet::new();
        codes_in(&root, &mut found);
        let registered: BTreeSet<String> = ERROR_CODES
            .iter()
            .map(|entry| String::from(entry.code))
            .collect();
        let unregistered: Vec<&String> = found.difference(&registered).collect();
        assert!(
            unregistered.is_empty(),
            "codes missing from the registry: {unregistered:?}"
        );
        // The registry's codes that the core's kinds do not make are the bindings' own.
        let bindings_own: Vec<&String> = registered.difference(&found).collect();
        assert_eq!(
            bindings_own,
            [
                "argument.batch_too_large",
                "argument.byte_length",
                "argument.negative",
                "argument.out_of_range",
                "internal.panic",
                "snowflake.forked",
            ]
        );
    }

    #[test]
    fn problems_agree_with_the_errors() {
        use crate::store::StoreErrorKind;
        for kind in StoreErrorKind::ALL {
            assert_eq!(
                error_code(kind.code()).map(|e| e.problem),
                Some(kind.problem())
            );
        }
    }
}
