//! RFC 9562 UUIDs: the 16-byte value and its four text forms.
//!
//! [`Uuid`] is any UUID (version 7 IDs, the name-based version 8 UUIDs the
//! idempotency-key module derives, or a foreign version 4); [`Uuid7`](crate::Uuid7)
//! narrows it to version 7. Text comes in four forms ([`TextForm`]), all read
//! case-insensitively by [`Uuid::parse`], which tells them apart by length:
//!
//! | form | length | example |
//! |---|---|---|
//! | hyphenated (8-4-4-4-12) | 36 | `017f22e2-79b0-7cc3-98c4-dc0c0c07398f` |
//! | simple (32 hex digits) | 32 | `017f22e279b07cc398c4dc0c0c07398f` |
//! | URN | 45 | `urn:uuid:017f22e2-79b0-7cc3-98c4-dc0c0c07398f` |
//! | Crockford base32 | 26 | `01FWHE4YDGFK1SHH6W1G60EECF` |
//!
//! Hex is written lower case, base32 upper case (as ULIDs are). In every form
//! text order equals byte order equals the order of [`Uuid`] values.

mod error;
mod text;

pub use error::{UuidParseError, UuidParseErrorKind};
pub use text::{TextForm, UuidText};

use core::fmt;
use core::str::FromStr;

/// An RFC 9562 UUID: 16 bytes in network order (most significant first).
///
/// Ordering compares the bytes, which is the order of [`as_u128`](Self::as_u128)
/// and of every text form.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Uuid([u8; 16]);

/// The variant field (the top bits of byte 8), RFC 9562 §4.1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Variant {
    /// `0xxx`: reserved, NCS backward compatibility (the Nil UUID has it).
    Ncs,
    /// `10xx`: the variant RFC 9562 (and RFC 4122 before it) defines.
    Rfc9562,
    /// `110x`: reserved, Microsoft backward compatibility.
    Microsoft,
    /// `111x`: reserved for future definition (the Max UUID has it).
    Future,
}

impl Variant {
    /// A stable lower-case name: `ncs`, `rfc9562`, `microsoft` or `future`.
    pub const fn name(self) -> &'static str {
        match self {
            Self::Ncs => "ncs",
            Self::Rfc9562 => "rfc9562",
            Self::Microsoft => "microsoft",
            Self::Future => "future",
        }
    }

    /// The bit pattern that identifies the variant, as RFC 9562 writes it.
    const fn pattern(self) -> &'static str {
        match self {
            Self::Ncs => "0xxx",
            Self::Rfc9562 => "10xx",
            Self::Microsoft => "110x",
            Self::Future => "111x",
        }
    }

    const fn of(byte8: u8) -> Self {
        if byte8 & 0x80 == 0 {
            Self::Ncs
        } else if byte8 & 0x40 == 0 {
            Self::Rfc9562
        } else if byte8 & 0x20 == 0 {
            Self::Microsoft
        } else {
            Self::Future
        }
    }
}

impl fmt::Display for Variant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.name(), self.pattern())
    }
}

impl Uuid {
    /// The Nil UUID, all bits zero (RFC 9562 §5.9).
    pub const NIL: Self = Self([0; 16]);
    /// The Max UUID, all bits one (RFC 9562 §5.10).
    pub const MAX: Self = Self([0xFF; 16]);

    /// Wraps 16 bytes, most significant first. Any bytes are a UUID.
    pub const fn from_bytes(bytes: [u8; 16]) -> Self {
        Self(bytes)
    }

    /// The 16 bytes, most significant first.
    pub const fn as_bytes(&self) -> &[u8; 16] {
        &self.0
    }

    /// The 16 bytes, most significant first, by value.
    pub const fn into_bytes(self) -> [u8; 16] {
        self.0
    }

    /// The UUID whose big-endian integer value is `value`.
    pub const fn from_u128(value: u128) -> Self {
        Self(value.to_be_bytes())
    }

    /// The UUID as a big-endian integer.
    pub const fn as_u128(&self) -> u128 {
        u128::from_be_bytes(self.0)
    }

    /// The version field: the high four bits of byte 6 (7 for UUIDv7).
    ///
    /// Meaningful for the [`Variant::Rfc9562`] variant (and the Nil and Max
    /// UUIDs, which read 0 and 15).
    pub const fn version(&self) -> u8 {
        self.0[6] >> 4
    }

    /// The variant field, from the top bits of byte 8.
    pub const fn variant(&self) -> Variant {
        Variant::of(self.0[8])
    }

    /// A version 8 (custom) UUID: `custom` with the version field set to 8
    /// and the variant bits set to RFC 9562's `10` (RFC 9562 §5.8).
    ///
    /// The other 122 bits are kept as given, e.g. the leading bytes of a
    /// SHA-256 digest for a name-based UUID.
    pub const fn new_v8(custom: [u8; 16]) -> Self {
        let mut bytes = custom;
        bytes[6] = (bytes[6] & 0x0F) | 0x80;
        bytes[8] = (bytes[8] & 0x3F) | 0x80;
        Self(bytes)
    }

    /// Reads any of the four text forms (hyphenated, simple, URN, Crockford
    /// base32), case-insensitively, telling them apart by length.
    pub fn parse(text: &str) -> Result<Self, UuidParseError> {
        text::parse(text).map(Self)
    }

    /// Writes the UUID in `form`, without allocating.
    pub fn format(&self, form: TextForm) -> UuidText {
        UuidText::new(&self.0, form)
    }
}

impl From<[u8; 16]> for Uuid {
    fn from(bytes: [u8; 16]) -> Self {
        Self(bytes)
    }
}

impl From<Uuid> for [u8; 16] {
    fn from(uuid: Uuid) -> Self {
        uuid.0
    }
}

impl From<u128> for Uuid {
    fn from(value: u128) -> Self {
        Self::from_u128(value)
    }
}

impl From<Uuid> for u128 {
    fn from(uuid: Uuid) -> Self {
        uuid.as_u128()
    }
}

/// The hyphenated lower-case form, e.g. `017f22e2-79b0-7cc3-98c4-dc0c0c07398f`.
impl fmt::Display for Uuid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.format(TextForm::Hyphenated).as_str())
    }
}

impl fmt::Debug for Uuid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Uuid({self})")
    }
}

/// Same as [`Uuid::parse`].
impl FromStr for Uuid {
    type Err = UuidParseError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        Self::parse(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;
    use proptest::prelude::*;

    const RFC_EXAMPLE: u128 = 0x017F22E2_79B0_7CC3_98C4_DC0C0C07398F;

    #[test]
    fn rfc_example_in_every_form() {
        let uuid = Uuid::from_u128(RFC_EXAMPLE);
        let forms = [
            (TextForm::Hyphenated, "017f22e2-79b0-7cc3-98c4-dc0c0c07398f"),
            (TextForm::Simple, "017f22e279b07cc398c4dc0c0c07398f"),
            (
                TextForm::Urn,
                "urn:uuid:017f22e2-79b0-7cc3-98c4-dc0c0c07398f",
            ),
            (TextForm::Base32, "01FWHE4YDGFK1SHH6W1G60EECF"),
        ];
        for (form, text) in forms {
            assert_eq!(uuid.format(form).as_str(), text);
            assert_eq!(Uuid::parse(text), Ok(uuid));
            assert_eq!(Uuid::parse(&text.to_ascii_uppercase()), Ok(uuid));
            assert_eq!(Uuid::parse(&text.to_ascii_lowercase()), Ok(uuid));
        }
        assert_eq!(uuid.to_string(), "017f22e2-79b0-7cc3-98c4-dc0c0c07398f");
        assert_eq!(uuid.version(), 7);
        assert_eq!(uuid.variant(), Variant::Rfc9562);
    }

    #[test]
    fn versions_and_variants() {
        assert_eq!(Uuid::NIL.version(), 0);
        assert_eq!(Uuid::NIL.variant(), Variant::Ncs);
        assert_eq!(Uuid::MAX.version(), 15);
        assert_eq!(Uuid::MAX.variant(), Variant::Future);
        let v4 = Uuid::parse("f81d4fae-7dec-41d0-a765-00a0c91e6bf6").unwrap();
        assert_eq!((v4.version(), v4.variant()), (4, Variant::Rfc9562));
        let microsoft = Uuid::parse("00000000-0000-1000-c000-000000000000").unwrap();
        assert_eq!(microsoft.variant(), Variant::Microsoft);
        assert_eq!(Variant::Microsoft.to_string(), "microsoft (110x)");
    }

    #[test]
    fn new_v8_sets_version_and_variant_only() {
        let v8 = Uuid::new_v8([0xFF; 16]);
        assert_eq!(v8.version(), 8);
        assert_eq!(v8.variant(), Variant::Rfc9562);
        assert_eq!(v8.to_string(), "ffffffff-ffff-8fff-bfff-ffffffffffff");
        assert_eq!(
            Uuid::new_v8([0; 16]).to_string(),
            "00000000-0000-8000-8000-000000000000"
        );
        let reference = ::uuid::Builder::from_custom_bytes([0xA5; 16]).into_uuid();
        assert_eq!(Uuid::new_v8([0xA5; 16]).as_bytes(), reference.as_bytes());
    }

    #[test]
    fn conversions() {
        let uuid = Uuid::from(RFC_EXAMPLE);
        assert_eq!(u128::from(uuid), RFC_EXAMPLE);
        assert_eq!(Uuid::from(uuid.into_bytes()), uuid);
        assert_eq!(<[u8; 16]>::from(uuid)[0], 0x01);
        assert_eq!("017F22E279B07CC398C4DC0C0C07398F".parse::<Uuid>(), Ok(uuid));
        assert_eq!(
            alloc::format!("{uuid:?}"),
            "Uuid(017f22e2-79b0-7cc3-98c4-dc0c0c07398f)"
        );
    }

    fn any_form() -> impl Strategy<Value = TextForm> {
        proptest::sample::select(&TextForm::ALL[..])
    }

    proptest! {
        #[test]
        fn text_round_trips(value: u128, form in any_form()) {
            let uuid = Uuid::from_u128(value);
            let text = uuid.format(form);
            prop_assert_eq!(text.as_str().len(), form.text_len());
            prop_assert_eq!(Uuid::parse(text.as_str()), Ok(uuid));
            prop_assert_eq!(Uuid::parse(&text.as_str().to_ascii_uppercase()), Ok(uuid));
            prop_assert_eq!(Uuid::parse(&text.as_str().to_ascii_lowercase()), Ok(uuid));
        }

        #[test]
        fn agrees_with_the_uuid_crate(value: u128) {
            let ours = Uuid::from_u128(value);
            let theirs = ::uuid::Uuid::from_u128(value);
            prop_assert_eq!(ours.to_string(), theirs.hyphenated().to_string());
            prop_assert_eq!(ours.format(TextForm::Simple).to_string(), theirs.simple().to_string());
            prop_assert_eq!(ours.format(TextForm::Urn).to_string(), theirs.urn().to_string());
            prop_assert_eq!(usize::from(ours.version()), theirs.get_version_num());
        }

        #[test]
        fn order_is_byte_order_and_text_order(a: u128, b: u128, form in any_form()) {
            let (x, y) = (Uuid::from_u128(a), Uuid::from_u128(b));
            prop_assert_eq!(x.cmp(&y), a.cmp(&b));
            prop_assert_eq!(x.cmp(&y), x.as_bytes().cmp(y.as_bytes()));
            prop_assert_eq!(x.cmp(&y), x.format(form).as_str().cmp(y.format(form).as_str()));
        }

        #[test]
        fn parse_never_panics(text in "\\PC{0,50}") {
            let _ = Uuid::parse(&text);
        }
    }
}
