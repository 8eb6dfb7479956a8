//! Payload fingerprints: SHA-256 of RFC 8785 canonical JSON, or of raw bytes.
//!
//! A fingerprint crosses as its 32 digest bytes.

use crate::error::{MintidError, fixed_bytes};
use mintid::fingerprint::{self, FieldSelection, Fingerprint};

fn selection(include: &[String], exclude: &[String]) -> Result<FieldSelection, MintidError> {
    Ok(FieldSelection::new(include, exclude)?)
}

/// The RFC 8785 canonical form of the part of a UTF-8 JSON text that the
/// JSON Pointers `include` (all when empty) and `exclude` select.
///
/// Fails with a `fingerprint.*` code (invalid pointers before the input is read).
#[uniffi::export]
pub fn fingerprint_canonical_json(
    text: Vec<u8>,
    include: Vec<String>,
    exclude: Vec<String>,
) -> Result<String, MintidError> {
    let selection = selection(&include, &exclude)?;
    Ok(fingerprint::canonicalize_selection(&text, &selection)?)
}

/// The fingerprint (32 digest bytes) of the selected part of a JSON text:
/// SHA-256 of [`fingerprint_canonical_json`].
///
/// Fails as [`fingerprint_canonical_json`] does.
#[uniffi::export]
pub fn fingerprint_json(
    text: Vec<u8>,
    include: Vec<String>,
    exclude: Vec<String>,
) -> Result<Vec<u8>, MintidError> {
    let selection = selection(&include, &exclude)?;
    Ok(fingerprint::fingerprint_json(&text, &selection)?
        .as_bytes()
        .to_vec())
}

/// The fingerprint (32 digest bytes) of a value the host parsed and wrote as
/// JSON text: as [`fingerprint_json`], but a document that is one string is
/// refused (`fingerprint.string_value`).
///
/// Fails as [`fingerprint_json`] does, or with `fingerprint.string_value`.
#[uniffi::export]
pub fn fingerprint_value(
    text: Vec<u8>,
    include: Vec<String>,
    exclude: Vec<String>,
) -> Result<Vec<u8>, MintidError> {
    let selection = selection(&include, &exclude)?;
    Ok(fingerprint::fingerprint_value(&text, &selection)?
        .as_bytes()
        .to_vec())
}

/// The fingerprint (32 digest bytes) of a raw, non-JSON body.
#[uniffi::export]
pub fn fingerprint_bytes(raw: Vec<u8>) -> Vec<u8> {
    fingerprint::fingerprint_bytes(&raw).as_bytes().to_vec()
}

/// Reads the text form `sha256:` + 43 base64url characters.
///
/// Fails with `fingerprint.invalid_text`.
#[uniffi::export]
pub fn fingerprint_parse(text: Vec<u8>) -> Result<Vec<u8>, MintidError> {
    Ok(Fingerprint::parse(&text)?.as_bytes().to_vec())
}

/// Writes a fingerprint (32 digest bytes) in its text form.
///
/// Fails with `argument.byte_length`.
#[uniffi::export]
pub fn fingerprint_to_text(digest: Vec<u8>) -> Result<String, MintidError> {
    let digest = fixed_bytes::<32>("a fingerprint", &digest)?;
    Ok(Fingerprint::from_digest(digest).to_string())
}
