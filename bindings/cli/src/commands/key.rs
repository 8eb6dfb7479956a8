//! `mintid key …`: idempotency keys.

use mintid::IdempotencyKey;
use mintid::key::parse_header;

use crate::cli::KeyCommand;
use crate::commands::payload;
use crate::error::CliError;
use crate::output::{Output, Report};

/// `mintid key …`.
pub fn run(command: &KeyCommand, out: &mut Output) -> Result<(), CliError> {
    match command {
        KeyCommand::Check { kind, scope, id } => {
            canonical(&IdempotencyKey::new(kind, scope, id)?, None, out)
        }
        KeyCommand::Parse { text } => {
            let key = IdempotencyKey::parse(text.as_bytes())?;
            out.report(&parts(&key, None))
        }
        KeyCommand::Header { value } => out.value("id", &parse_header(value.as_bytes())?),
        KeyCommand::Build {
            kind,
            scope,
            fields,
        } => canonical(
            &IdempotencyKey::from_fields(kind, scope, fields)?,
            None,
            out,
        ),
        KeyCommand::Derive {
            kind,
            scope,
            payload: payload_args,
        } => {
            let bytes = payload::read(payload_args)?;
            let fingerprint = payload::fingerprint_of(payload_args, &bytes)?;
            let key = IdempotencyKey::derived(kind, scope, &fingerprint)?;
            canonical(&key, Some(fingerprint.to_string()), out)
        }
    }
}

/// The canonical text, or with `--json` every part.
fn canonical(
    key: &IdempotencyKey,
    fingerprint: Option<String>,
    out: &mut Output,
) -> Result<(), CliError> {
    if out.is_json() {
        out.report(&parts(key, fingerprint))
    } else {
        out.line(&key.to_string())
    }
}

fn parts(key: &IdempotencyKey, fingerprint: Option<String>) -> Report {
    let mut report = Report::new();
    report
        .field("kind", key.kind())
        .field("scope", key.scope())
        .field("id", key.id())
        .field("key", key.to_string());
    if let Some(fingerprint) = fingerprint {
        report.field("fingerprint", fingerprint);
    }
    report
}
