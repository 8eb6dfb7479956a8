//! Crockford base32 of 64-bit values.

/// Encodes a 64-bit value as 13 Crockford base32 digits.
#[uniffi::export]
pub fn base32_encode_u64(value: u64) -> String {
    String::from_utf8_lossy(&mintid::base32::encode_u64(value)).into_owned()
}
