//! `mintid fingerprint`.

use mintid::fingerprint;

use crate::cli::FingerprintArgs;
use crate::commands::payload;
use crate::error::CliError;
use crate::output::{Output, Report};

/// `mintid fingerprint`: the fingerprint, or with `--canonical` the
/// canonical JSON text that is hashed (both with `--json`).
pub fn run(args: &FingerprintArgs, out: &mut Output) -> Result<(), CliError> {
    let bytes = payload::read(&args.payload)?;
    let fingerprint = payload::fingerprint_of(&args.payload, &bytes)?.to_string();
    let canonical = if args.canonical {
        Some(fingerprint::canonicalize_selection(
            &bytes,
            &payload::selection(&args.payload)?,
        )?)
    } else {
        None
    };
    if !out.is_json() {
        return out.line(canonical.as_deref().unwrap_or(&fingerprint));
    }
    let mut report = Report::new();
    report
        .field("fingerprint", fingerprint)
        .field("input", if args.payload.bytes { "bytes" } else { "json" });
    if let Some(canonical) = canonical {
        report.field("canonical", canonical);
    }
    out.report(&report)
}
