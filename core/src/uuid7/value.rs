//! The `Uuid7` value type.

use super::error::Uuid7Error;
use super::layout::{MAX_UNIX_MS, TAIL_BITS};
use crate::uuid::{TextForm, Uuid, UuidText, Variant};
use core::fmt;
use core::str::FromStr;

const RAND_A_MAX: u16 = (1 << 12) - 1;
const RAND_B_MAX: u64 = (1 << 62) - 1;

/// A UUID guaranteed to be version 7 with the RFC 9562 variant.
///
/// Bits, most significant first: `unix_ts_ms` (48) | version `0111` (4) |
/// `rand_a` (12) | variant `10` (2) | `rand_b` (62). Ordering compares the
/// bytes, so IDs sort by timestamp first.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Uuid7(Uuid);

impl Uuid7 {
    /// Packs fields already known to be in range (masking them to be sure).
    pub(super) const fn from_parts(unix_millis: u64, rand_a: u16, rand_b: u64) -> Self {
        let high = ((unix_millis & MAX_UNIX_MS) << 16) | 0x7000 | (rand_a & RAND_A_MAX) as u64;
        let low = (0b10 << 62) | (rand_b & RAND_B_MAX);
        Self(Uuid::from_u128(((high as u128) << 64) | low as u128))
    }

    /// Accepts `uuid` if it is version 7 with the RFC 9562 variant.
    ///
    /// The version is checked first: a version 4 UUID gives
    /// `uuid7.wrong_version` ("expected version 7, found 4").
    pub const fn from_uuid(uuid: Uuid) -> Result<Self, Uuid7Error> {
        if uuid.version() != 7 {
            return Err(Uuid7Error::wrong_version(uuid.version()));
        }
        match uuid.variant() {
            Variant::Rfc9562 => Ok(Self(uuid)),
            other => Err(Uuid7Error::wrong_variant(other)),
        }
    }

    /// Accepts 16 bytes (most significant first) holding a version 7 UUID.
    pub const fn from_bytes(bytes: [u8; 16]) -> Result<Self, Uuid7Error> {
        Self::from_uuid(Uuid::from_bytes(bytes))
    }

    /// Builds a UUIDv7 from its fields: `unix_millis` below 2^48, `rand_a`
    /// below 2^12, `rand_b` below 2^62.
    pub const fn from_fields(
        unix_millis: u64,
        rand_a: u16,
        rand_b: u64,
    ) -> Result<Self, Uuid7Error> {
        if unix_millis > MAX_UNIX_MS {
            Err(Uuid7Error::timestamp_out_of_range(unix_millis))
        } else if rand_a > RAND_A_MAX {
            Err(Uuid7Error::rand_a_out_of_range(rand_a))
        } else if rand_b > RAND_B_MAX {
            Err(Uuid7Error::rand_b_out_of_range(rand_b))
        } else {
            Ok(Self::from_parts(unix_millis, rand_a, rand_b))
        }
    }

    /// Reads any of the four text forms (see [`Uuid::parse`]) and requires
    /// version 7 with the RFC 9562 variant.
    pub fn parse(text: &str) -> Result<Self, Uuid7Error> {
        let uuid = Uuid::parse(text).map_err(Uuid7Error::invalid_text)?;
        Self::from_uuid(uuid)
    }

    /// Milliseconds since the Unix epoch: the top 48 bits.
    pub const fn timestamp_millis(&self) -> u64 {
        (self.0.as_u128() >> 80) as u64
    }

    /// The 12 bits after the version field.
    pub const fn rand_a(&self) -> u16 {
        ((self.0.as_u128() >> 64) as u16) & RAND_A_MAX
    }

    /// The 62 bits after the variant field.
    pub const fn rand_b(&self) -> u64 {
        (self.0.as_u128() as u64) & RAND_B_MAX
    }

    /// The 16-bit counter of mintid's generators: `rand_a` followed by the
    /// top 4 bits of `rand_b`.
    ///
    /// Meaningful for IDs from mintid's generators (and any generator using
    /// the same layout); for other UUIDv7s these are just random bits.
    pub const fn counter(&self) -> u16 {
        (self.rand_a() << 4) | (self.rand_b() >> TAIL_BITS) as u16
    }

    /// The ID as a generic [`Uuid`].
    pub const fn as_uuid(&self) -> &Uuid {
        &self.0
    }

    /// The 16 bytes, most significant first.
    pub const fn as_bytes(&self) -> &[u8; 16] {
        self.0.as_bytes()
    }

    /// Writes the ID in `form`, without allocating.
    pub fn format(&self, form: TextForm) -> UuidText {
        self.0.format(form)
    }
}

impl From<Uuid7> for Uuid {
    fn from(id: Uuid7) -> Self {
        id.0
    }
}

/// Same as [`Uuid7::from_uuid`].
impl TryFrom<Uuid> for Uuid7 {
    type Error = Uuid7Error;

    fn try_from(uuid: Uuid) -> Result<Self, Self::Error> {
        Self::from_uuid(uuid)
    }
}

/// The hyphenated lower-case form, e.g. `017f22e2-79b0-7cc3-98c4-dc0c0c07398f`.
impl fmt::Display for Uuid7 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0, f)
    }
}

impl fmt::Debug for Uuid7 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Uuid7({})", self.0)
    }
}

/// Same as [`Uuid7::parse`].
impl FromStr for Uuid7 {
    type Err = Uuid7Error;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        Self::parse(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::uuid7::Uuid7ErrorKind;
    use alloc::string::ToString;
    use proptest::prelude::*;

    #[test]
    fn rfc_9562_appendix_a_example() {
        let id = Uuid7::from_fields(0x017F_22E2_79B0, 0xCC3, 0x18C4_DC0C_0C07_398F).unwrap();
        assert_eq!(id.to_string(), "017f22e2-79b0-7cc3-98c4-dc0c0c07398f");
        assert_eq!(id.timestamp_millis(), 0x017F_22E2_79B0);
        assert_eq!(id.rand_a(), 0xCC3);
        assert_eq!(id.rand_b(), 0x18C4_DC0C_0C07_398F);
        assert_eq!(id.counter(), 0xCC36);
        assert_eq!("017F22E2-79B0-7CC3-98C4-DC0C0C07398F".parse(), Ok(id));
        assert_eq!(
            alloc::format!("{id:?}"),
            "Uuid7(017f22e2-79b0-7cc3-98c4-dc0c0c07398f)"
        );
        let reference = ::uuid::Uuid::parse_str(&id.to_string()).unwrap();
        assert_eq!(reference.get_version_num(), 7);
        assert_eq!(reference.get_variant(), ::uuid::Variant::RFC4122);
    }

    #[test]
    fn other_versions_and_variants_are_rejected() {
        let v4 = Uuid7::parse("f81d4fae-7dec-41d0-a765-00a0c91e6bf6").unwrap_err();
        assert_eq!(v4.kind(), Uuid7ErrorKind::WrongVersion);
        assert_eq!(v4.to_string(), "expected version 7, found 4");
        let nil = Uuid7::from_uuid(Uuid::NIL).unwrap_err();
        assert_eq!(nil.to_string(), "expected version 7, found 0");
        let microsoft = Uuid7::parse("017f22e2-79b0-7cc3-d8c4-dc0c0c07398f").unwrap_err();
        assert_eq!(microsoft.code(), "uuid7.wrong_variant");
        let ncs = Uuid7::from_bytes(*Uuid::from_u128(0x7000 << 64).as_bytes()).unwrap_err();
        assert_eq!(ncs.kind(), Uuid7ErrorKind::WrongVariant);
        let text = Uuid7::parse("017f22e2-79b0-7cc3-98c4-dc0c0c07398").unwrap_err();
        assert_eq!(text.code(), "uuid7.invalid_text");
        assert_eq!(
            Uuid7::try_from(Uuid::MAX).unwrap_err().code(),
            "uuid7.wrong_version"
        );
    }

    #[test]
    fn fields_are_range_checked() {
        let max = Uuid7::from_fields(MAX_UNIX_MS, RAND_A_MAX, RAND_B_MAX).unwrap();
        assert_eq!(max.to_string(), "ffffffff-ffff-7fff-bfff-ffffffffffff");
        let min = Uuid7::from_fields(0, 0, 0).unwrap();
        assert_eq!(min.to_string(), "00000000-0000-7000-8000-000000000000");
        let codes = [
            Uuid7::from_fields(MAX_UNIX_MS + 1, 0, 0),
            Uuid7::from_fields(0, RAND_A_MAX + 1, 0),
            Uuid7::from_fields(0, 0, RAND_B_MAX + 1),
        ]
        .map(|r| r.unwrap_err().code());
        assert_eq!(
            codes,
            [
                "uuid7.timestamp_out_of_range",
                "uuid7.rand_a_out_of_range",
                "uuid7.rand_b_out_of_range"
            ]
        );
    }

    fn any_form() -> impl Strategy<Value = TextForm> {
        proptest::sample::select(&TextForm::ALL[..])
    }

    prop_compose! {
        fn any_uuid7()(ms in 0..=MAX_UNIX_MS, a in 0..=RAND_A_MAX, b in 0..=RAND_B_MAX) -> Uuid7 {
            Uuid7::from_fields(ms, a, b).unwrap()
        }
    }

    proptest! {
        #[test]
        fn fields_and_text_round_trip(id in any_uuid7(), form in any_form()) {
            let again = Uuid7::from_fields(id.timestamp_millis(), id.rand_a(), id.rand_b());
            prop_assert_eq!(again, Ok(id));
            prop_assert_eq!(Uuid7::from_bytes(*id.as_bytes()), Ok(id));
            prop_assert_eq!(Uuid7::parse(id.format(form).as_str()), Ok(id));
            prop_assert_eq!(Uuid::from(id), *id.as_uuid());
        }

        #[test]
        fn the_uuid_crate_agrees(id in any_uuid7()) {
            let theirs = ::uuid::Uuid::parse_str(&id.to_string()).unwrap();
            prop_assert_eq!(theirs.get_version_num(), 7);
            prop_assert_eq!(theirs.get_variant(), ::uuid::Variant::RFC4122);
            let (secs, nanos) = theirs.get_timestamp().unwrap().to_unix();
            prop_assert_eq!(secs * 1000 + u64::from(nanos) / 1_000_000, id.timestamp_millis());
        }

        #[test]
        fn order_is_timestamp_first_and_text_order(a in any_uuid7(), b in any_uuid7(), form in any_form()) {
            prop_assert_eq!(a.cmp(&b), a.as_bytes().cmp(b.as_bytes()));
            prop_assert_eq!(a.cmp(&b), a.format(form).as_str().cmp(b.format(form).as_str()));
            if a.timestamp_millis() != b.timestamp_millis() {
                prop_assert_eq!(a.cmp(&b), a.timestamp_millis().cmp(&b.timestamp_millis()));
            }
        }

        #[test]
        fn any_bytes_are_checked_not_trusted(bytes: [u8; 16]) {
            let uuid = Uuid::from_bytes(bytes);
            let accepted = uuid.version() == 7 && uuid.variant() == Variant::Rfc9562;
            prop_assert_eq!(Uuid7::from_bytes(bytes).is_ok(), accepted);
        }
    }
}
