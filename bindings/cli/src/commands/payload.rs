//! Reading a payload from a file or stdin, and fingerprinting it.

use std::fs;
use std::io::{self, Read};

use mintid::fingerprint::{self, FieldSelection, Fingerprint};

use crate::cli::PayloadArgs;
use crate::error::CliError;

/// The payload's bytes: the file, or stdin when absent or `-`.
pub fn read(args: &PayloadArgs) -> Result<Vec<u8>, CliError> {
    let unreadable = |what: &str, error: io::Error| {
        CliError::invalid("input.unreadable", format!("cannot read {what}: {error}"))
    };
    match &args.file {
        Some(path) if path.as_os_str() != "-" => {
            fs::read(path).map_err(|error| unreadable(&path.display().to_string(), error))
        }
        _ => {
            let mut bytes = Vec::new();
            io::stdin()
                .read_to_end(&mut bytes)
                .map_err(|error| unreadable("stdin", error))?;
            Ok(bytes)
        }
    }
}

/// The field selection of `--include` and `--exclude`.
pub fn selection(args: &PayloadArgs) -> Result<FieldSelection, CliError> {
    Ok(FieldSelection::new(&args.include, &args.exclude)?)
}

/// The payload's fingerprint: of the raw bytes with `--bytes`, else of the
/// selected JSON.
pub fn fingerprint_of(args: &PayloadArgs, payload: &[u8]) -> Result<Fingerprint, CliError> {
    if args.bytes {
        return Ok(fingerprint::fingerprint_bytes(payload));
    }
    Ok(fingerprint::fingerprint_json(payload, &selection(args)?)?)
}
