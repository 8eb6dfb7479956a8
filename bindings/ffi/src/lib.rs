//! uniffi exports of the `mintid` core for Python and Kotlin.
//!
//! Only type and error conversion lives here; every rule is in the core.
//! Values cross as plain data (UUIDs as 16 bytes, 64-bit IDs as `u64`), every
//! failure as a [`MintidError`] carrying the core's stable code and message,
//! and generators hand out IDs in bulk so a host pays one call per batch.
#![deny(missing_docs)]

mod base32;
mod batch;
mod error;
mod error_codes;
mod fingerprint;
mod http;
mod id_buffer;
mod key;
mod lease;
mod light;
mod metrics;
mod outbox;
mod record;
mod request_id;
mod rollback;
mod segment;
mod snowflake;
mod sources;
mod store;
mod uuid;
mod uuid7;
mod version;
mod wire;

pub use base32::base32_encode_u64;
pub use batch::{MAX_BATCH, max_batch};
pub use error::MintidError;
pub use fingerprint::{
    fingerprint_bytes, fingerprint_canonical_json, fingerprint_json, fingerprint_parse,
    fingerprint_to_text,
};
pub use http::{
    HttpDefaults, HttpHeader, HttpResponse, KeyAdmission, StoredEnvelope, http_admit_key,
    http_decode_envelope, http_default_kind, http_defaults, http_encode_envelope,
    http_fingerprint_body, http_fingerprint_request, http_grant_document,
    http_is_json_content_type, http_problem_document, http_status_document,
};
pub use id_buffer::{id_buffer_batch_cap, id_buffer_fresh_until, id_buffer_next_batch_size};
pub use key::{
    IdempotencyKey, idempotency_key_derived, idempotency_key_from_fields,
    idempotency_key_from_header, idempotency_key_id_from_fields, idempotency_key_new,
    idempotency_key_parse, idempotency_key_parse_header,
};
pub use lease::{
    Acquisition, LeaseGuard, LeaseNoneFound, LeasePolicy, Release, Renewal, WorkerLease,
    lease_acquire, lease_none_found,
};
pub use outbox::{
    AfterFailure, BatchClaim, Delivery, Enqueued, OutboxStatus, RelayPolicy, outbox_after_failure,
    outbox_attempts_exhausted_error, outbox_backoff_millis, outbox_check_marked,
    outbox_check_message, outbox_claim, outbox_delivery, outbox_enqueued, outbox_relay_policy_new,
    outbox_status_parse, outbox_status_text,
};
pub use record::{
    CheckedRecordPolicy, Claim, Decision, Expected, Failure, Fence, HttpConstants, Incoming,
    Outcome, Problem, ProblemDetails, Record, RecordPolicy, RecordStatus, record_claim_apply,
    record_complete, record_decide, record_fail, record_http_constants, record_is_removable,
    record_policy_default, record_problem_details, record_problems, record_retry_after_secs,
    record_status_parse, record_status_text,
};
pub use request_id::{
    FreshnessDefaults, Grant, KeyRing, SignedRequestId, grant_mint, grant_parse,
    request_id_freshness_defaults, request_id_parse, request_id_verify_unsigned,
};
pub use rollback::RollbackPolicy;
pub use segment::{SegmentAllocator, SegmentPolicy, segment_adapt, segment_policy_new};
pub use snowflake::{
    SequencePolicy, Snowflake, SnowflakeLayout, SnowflakeParts, SnowflakeWorkerSplit,
    snowflake_id_from_base32, snowflake_id_from_decimal, snowflake_id_to_base32,
    snowflake_preset_names,
};
pub use sources::{ManualClock, reseed_thread_entropy};
pub use store::{
    DbErrorClass, Dialect, Manifest, ParamType, Placeholder, ResultKind, Statement, StoreLimit,
    Way, raised_text, storable_text_from_bytes, store_limits, store_statements,
};
pub use uuid::{
    UuidInfo, UuidTextForm, UuidVariant, uuid_format, uuid_inspect, uuid_new_v8, uuid_parse,
};
pub use uuid7::{Uuid7Fields, Uuid7Generator, uuid7_from_bytes, uuid7_from_fields, uuid7_parse};
pub use version::core_version;

uniffi::setup_scaffolding!();
