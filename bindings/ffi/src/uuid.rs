//! UUIDs of any version: the four text forms, version, variant, version 8.
//!
//! A UUID crosses the boundary as its 16 bytes, most significant first.

use crate::error::{MintidError, fixed_bytes};
use mintid::Uuid;
use mintid::uuid::{TextForm, Variant};

/// A text form of a UUID (the core's `TextForm`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, uniffi::Enum)]
pub enum UuidTextForm {
    /// `xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx`, lower-case hex.
    Hyphenated,
    /// 32 lower-case hex digits.
    Simple,
    /// `urn:uuid:` and the hyphenated form.
    Urn,
    /// 26 upper-case Crockford base32 digits.
    Base32,
}

impl From<UuidTextForm> for TextForm {
    fn from(form: UuidTextForm) -> Self {
        match form {
            UuidTextForm::Hyphenated => Self::Hyphenated,
            UuidTextForm::Simple => Self::Simple,
            UuidTextForm::Urn => Self::Urn,
            UuidTextForm::Base32 => Self::Base32,
        }
    }
}

/// The variant field of a UUID (the core's `Variant`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, uniffi::Enum)]
pub enum UuidVariant {
    /// `0xxx`: NCS backward compatibility.
    Ncs,
    /// `10xx`: the variant RFC 9562 defines.
    Rfc9562,
    /// `110x`: Microsoft backward compatibility.
    Microsoft,
    /// `111x`: reserved for the future.
    Future,
}

impl From<Variant> for UuidVariant {
    fn from(variant: Variant) -> Self {
        match variant {
            Variant::Ncs => Self::Ncs,
            Variant::Rfc9562 => Self::Rfc9562,
            Variant::Microsoft => Self::Microsoft,
            Variant::Future => Self::Future,
        }
    }
}

/// What a UUID says about itself.
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Record)]
pub struct UuidInfo {
    /// The 16 bytes, most significant first.
    pub bytes: Vec<u8>,
    /// The version field (0 to 15).
    pub version: u8,
    /// The variant field.
    pub variant: UuidVariant,
}

pub(crate) fn uuid_from_bytes(bytes: &[u8]) -> Result<Uuid, MintidError> {
    fixed_bytes::<16>("a UUID", bytes).map(Uuid::from_bytes)
}

/// Reads a UUID of any version in any of the four text forms.
///
/// Fails with `uuid.invalid_length`, `uuid.invalid_character` or `uuid.base32_overflow`.
#[uniffi::export]
pub fn uuid_parse(text: String) -> Result<UuidInfo, MintidError> {
    let uuid = Uuid::parse(&text)?;
    Ok(uuid_info(&uuid))
}

/// The version and variant of a UUID given as 16 bytes.
///
/// Fails with `argument.byte_length`.
#[uniffi::export]
pub fn uuid_inspect(bytes: Vec<u8>) -> Result<UuidInfo, MintidError> {
    uuid_from_bytes(&bytes).map(|uuid| uuid_info(&uuid))
}

/// Writes a UUID given as 16 bytes in `form`.
///
/// Fails with `argument.byte_length`.
#[uniffi::export]
pub fn uuid_format(bytes: Vec<u8>, form: UuidTextForm) -> Result<String, MintidError> {
    uuid_from_bytes(&bytes).map(|uuid| uuid.format(form.into()).as_str().to_owned())
}

/// A version 8 UUID carrying `custom` (16 bytes) except where the version
/// and variant fields go.
///
/// Fails with `argument.byte_length`.
#[uniffi::export]
pub fn uuid_new_v8(custom: Vec<u8>) -> Result<Vec<u8>, MintidError> {
    let custom = fixed_bytes::<16>("the custom bits of a UUIDv8", &custom)?;
    Ok(Uuid::new_v8(custom).as_bytes().to_vec())
}

fn uuid_info(uuid: &Uuid) -> UuidInfo {
    UuidInfo {
        bytes: uuid.as_bytes().to_vec(),
        version: uuid.version(),
        variant: uuid.variant().into(),
    }
}
