//! `mintid inspect`: what an ID holds.

use mintid::request_id::TEXT_LEN as SIGNED_TEXT_LEN;
use mintid::uuid::{TextForm, Variant};
use mintid::{Grant, RequestId, SnowflakeId, SnowflakeLayout, Uuid, Uuid7};

use crate::cli::InspectArgs;
use crate::error::CliError;
use crate::layout;
use crate::output::{Output, Report};
use crate::time::{now_unix_millis, rfc3339};

/// How far past now a decoded Snowflake time may lie before the report
/// suggests the layout or epoch is wrong.
const FUTURE_SLACK_MS: u64 = 60_000;

/// The kinds of ID the command reads.
enum Id {
    Snowflake(SnowflakeId),
    Uuid(Uuid),
    RequestId(RequestId),
    Grant(Grant),
}

/// `mintid inspect`.
pub fn run(args: &InspectArgs, out: &mut Output) -> Result<(), CliError> {
    let report = match recognise(&args.id)? {
        Id::Snowflake(id) => snowflake(id, &layout::resolve(&args.layout)?)?,
        _ if layout::is_given(&args.layout) => {
            return Err(CliError::usage(
                "--layout, --bits, --epoch and --tick apply to Snowflake IDs only",
            ));
        }
        Id::Uuid(uuid) => uuid_report(uuid),
        Id::RequestId(id) => request_id_report(&id),
        Id::Grant(grant) => grant_report(&grant),
    };
    out.report(&report)
}

/// Tells the kinds apart: only digits is a decimal Snowflake; 13 characters
/// a base32 Snowflake; 36, 32, 45 or 26 characters a UUID; 58 characters a
/// signed request ID or a grant.
fn recognise(text: &str) -> Result<Id, CliError> {
    if !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()) {
        return Ok(Id::Snowflake(SnowflakeId::from_decimal(text)?));
    }
    match text.chars().count() {
        13 => Ok(Id::Snowflake(SnowflakeId::from_base32(text)?)),
        26 | 32 | 36 | 45 => Ok(Id::Uuid(Uuid::parse(text)?)),
        SIGNED_TEXT_LEN => match RequestId::parse(text) {
            Ok(id) => Ok(Id::RequestId(id)),
            Err(error) => Grant::parse(text).map(Id::Grant).map_err(|_| error.into()),
        },
        length => {
            let shown: String = text.chars().take(64).collect();
            Err(CliError::invalid(
                "inspect.unrecognized",
                format!(
                    "{shown:?}{} ({length} characters) is neither a Snowflake ID (decimal digits, or 13 base32 characters) nor a UUID (36, 32, 45 or 26 characters) nor a signed request ID or grant (58 characters)",
                    if length > 64 { "…" } else { "" }
                ),
            ))
        }
    }
}

fn snowflake(id: SnowflakeId, layout: &SnowflakeLayout) -> Result<Report, CliError> {
    let parts = layout.decode(id)?;
    let mut report = Report::new();
    report
        .field("kind", "snowflake")
        .field("id", id.to_string())
        .field("base32", id.to_base32())
        .field_with_text("layout", layout::to_json(layout), layout::summary(layout))
        .field("time", rfc3339(parts.unix_millis))
        .field("unix_ms", parts.unix_millis)
        .field("tick", parts.tick);
    if layout.datacenter_bits() > 0 {
        let (datacenter, worker) = layout.split_worker_id(parts.worker);
        report
            .field("datacenter", datacenter)
            .field("worker", worker)
            .field("worker_field", parts.worker);
    } else {
        report.field("worker", parts.worker);
    }
    report.field("sequence", parts.sequence);
    if parts.unix_millis > now_unix_millis().saturating_add(FUTURE_SLACK_MS) {
        report.field(
            "note",
            "this time lies in the future: is the layout or epoch right?",
        );
    }
    Ok(report)
}

fn uuid_report(uuid: Uuid) -> Report {
    let mut report = Report::new();
    report
        .field("kind", "uuid")
        .field("uuid", uuid.to_string())
        .field("base32", uuid.format(TextForm::Base32).as_str())
        .field_with_text(
            "version",
            uuid.version(),
            format!("{} ({})", uuid.version(), version_name(uuid)),
        )
        .json_only("version_name", version_name(uuid))
        .field_with_text("variant", uuid.variant().name(), uuid.variant().to_string());
    if let Ok(id) = Uuid7::from_uuid(uuid) {
        report
            .field("time", rfc3339(id.timestamp_millis()))
            .field("unix_ms", id.timestamp_millis())
            .field("rand_a", format!("0x{:03x}", id.rand_a()))
            .field("rand_b", format!("0x{:016x}", id.rand_b()))
            .field_with_text(
                "counter",
                id.counter(),
                format!(
                    "{} (rand_a and the top 4 bits of rand_b, as mintid's generators count)",
                    id.counter()
                ),
            );
    }
    report
}

/// What a signed request ID says about itself, before any verification.
fn request_id_report(id: &RequestId) -> Report {
    let uuid = id.unverified_uuid();
    let mut report = Report::new();
    report
        .field("kind", "request_id")
        .field_with_text(
            "verified",
            false,
            "no: only `mintid request-id verify` with the server's keys can tell",
        )
        .field("key_id", id.key_id())
        .field("grant_expires", rfc3339(id.expires_millis()))
        .field("grant_expires_ms", id.expires_millis())
        .field("uuid", uuid.to_string())
        .field("time", rfc3339(uuid.timestamp_millis()))
        .field("unix_ms", uuid.timestamp_millis());
    report
}

/// What a grant says about itself (never its key).
fn grant_report(grant: &Grant) -> Report {
    let mut report = Report::new();
    report
        .field("kind", "grant")
        .field("key_id", grant.key_id())
        .field("expires", rfc3339(grant.expires_millis()))
        .field("expires_ms", grant.expires_millis())
        .field(
            "note",
            "a grant is a secret of its scope: whoever holds it can mint request IDs until it expires",
        );
    report
}

/// What a UUID's version field says it is (RFC 9562 §4.2, §5).
fn version_name(uuid: Uuid) -> &'static str {
    if uuid == Uuid::NIL {
        return "the Nil UUID, RFC 9562 §5.9";
    }
    if uuid == Uuid::MAX {
        return "the Max UUID, RFC 9562 §5.10";
    }
    if uuid.variant() != Variant::Rfc9562 {
        return "not the RFC 9562 variant, so the version field has no defined meaning";
    }
    match uuid.version() {
        1 => "Gregorian time-based, RFC 9562 §5.1",
        2 => "DCE Security, RFC 9562 §5.2",
        3 => "name-based with MD5, RFC 9562 §5.3",
        4 => "random, RFC 9562 §5.4",
        5 => "name-based with SHA-1, RFC 9562 §5.5",
        6 => "reordered Gregorian time-based, RFC 9562 §5.6",
        7 => "Unix Epoch time-based, RFC 9562 §5.7",
        8 => "custom, RFC 9562 §5.8 (mintid's derived idempotency keys are version 8)",
        _ => "reserved: RFC 9562 defines no such version",
    }
}
