//! `mintid grant …` and `mintid request-id …`: signed request IDs.

use mintid::request_id::{Freshness, SECRET_MIN_LEN, verify_unsigned};
use mintid::{Grant, RequestId, Uuid7Generator};

use crate::cli::{GrantCommand, RequestIdCommand};
use crate::error::CliError;
use crate::key_file;
use crate::output::{Output, Report};
use crate::time::{now_unix_millis, parse_duration, rfc3339};

/// `mintid grant …`.
pub fn grant(command: &GrantCommand, out: &mut Output) -> Result<(), CliError> {
    match command {
        GrantCommand::Issue {
            secret_file,
            key_id,
            scope,
            ttl,
        } => {
            let ttl = parse_duration(ttl)?;
            if ttl == 0 {
                return Err(CliError::usage(
                    "--ttl must be at least 1ms: a grant of no time is expired when issued",
                ));
            }
            let ring = key_file::read(secret_file, *key_id)?;
            let expires = now_unix_millis().checked_add(ttl).ok_or_else(|| {
                CliError::usage(format!("--ttl {ttl} ms reaches past the end of time"))
            })?;
            let grant = ring.issue_grant(scope, expires)?;
            if !out.is_json() {
                return out.line(&grant.to_text());
            }
            let mut report = Report::new();
            report
                .field("grant", grant.to_text())
                .field("key_id", grant.key_id())
                .field("scope", scope.as_str())
                .field("expires", rfc3339(grant.expires_millis()))
                .field("expires_ms", grant.expires_millis());
            out.report(&report)
        }
        GrantCommand::Secret { key_id } => {
            let mut secret = [0u8; SECRET_MIN_LEN];
            getrandom::fill(&mut secret).map_err(|error| {
                CliError::invalid(
                    "secret.unavailable",
                    format!("the operating system gave no randomness: {error}"),
                )
            })?;
            let secret = key_file::encode_hex(&secret);
            let line = format!("{key_id} {secret}");
            if !out.is_json() {
                return out.line(&line);
            }
            let mut report = Report::new();
            report
                .field("key_id", *key_id)
                .field("secret", secret)
                .field("line", line);
            out.report(&report)
        }
    }
}

/// `mintid request-id …`.
pub fn request_id(command: &RequestIdCommand, out: &mut Output) -> Result<(), CliError> {
    match command {
        RequestIdCommand::Mint { grant, count } => {
            let grant = Grant::parse(grant)?;
            let mut uuids = Uuid7Generator::new();
            let mut list = out.id_list();
            for _ in 0..*count {
                list.push(&grant.mint(&uuids.generate()?).to_text())?;
            }
            list.finish()
        }
        RequestIdCommand::Verify {
            secret_file,
            scope,
            unsigned,
            max_age,
            max_skew,
            id,
        } => {
            let freshness = Freshness {
                max_age_millis: max_age
                    .as_deref()
                    .map_or(Ok(Freshness::DEFAULT.max_age_millis), parse_duration)?,
                max_skew_millis: max_skew
                    .as_deref()
                    .map_or(Ok(Freshness::DEFAULT.max_skew_millis), parse_duration)?,
            };
            let now = now_unix_millis();
            let (uuid, signed) = if *unsigned {
                (verify_unsigned(id, now, &freshness)?, None)
            } else {
                let (Some(path), Some(scope)) = (secret_file, scope) else {
                    return Err(CliError::usage(
                        "--secret-file and --scope are required unless --unsigned is given",
                    ));
                };
                let ring = key_file::read(path, None)?;
                let parsed = RequestId::parse(id)?;
                let uuid = ring.verify_parsed(&parsed, scope, now, &freshness)?;
                (uuid, Some(parsed))
            };
            if !out.is_json() {
                return out.line(&uuid.to_string());
            }
            let mut report = Report::new();
            report
                .field("valid", true)
                .field("signed", signed.is_some())
                .field("uuid", uuid.to_string())
                .field("time", rfc3339(uuid.timestamp_millis()));
            if let Some(parsed) = signed {
                report
                    .field("key_id", parsed.key_id())
                    .field("grant_expires", rfc3339(parsed.expires_millis()));
            }
            out.report(&report)
        }
    }
}
