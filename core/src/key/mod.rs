//! Idempotency keys: which operation, for whom, and which attempt.
//!
//! An [`IdempotencyKey`] has three parts, each fitting a column of the
//! shared schema:
//!
//! | part    | bytes | characters                                          |
//! |---------|-------|-----------------------------------------------------|
//! | `kind`  | 1–32  | `a-z 0-9 . _ -` (e.g. `order.create`)               |
//! | `scope` | 1–64  | printable ASCII `!`–`~` (0x21–0x7E), no space       |
//! | `id`    | 1–64  | printable ASCII `!`–`~` (0x21–0x7E), no space       |
//!
//! The kind names an operation in code, so it has one spelling (lower
//! case). Scope and id come from outside (a tenant or user id, a client's
//! header, an order number) and may hold any visible ASCII character,
//! quotes, `%`, `:` and `;` included: storage binds them as parameters,
//! never splices them into SQL. Whitespace, control characters and
//! non-ASCII are refused, with the character and its position named.
//!
//! Ids come from a client's `Idempotency-Key` header ([`parse_header`]),
//! from business fields ([`IdempotencyKey::from_fields`]), or from the
//! payload's fingerprint when the client sent none
//! ([`IdempotencyKey::derived`]).
//!
//! The canonical text of a whole key is `kind:scope:id`, with `%` and `:`
//! in the scope written `%25` and `%3A` (upper-case hex); the id is written
//! as it is, since it comes last. [`IdempotencyKey::parse`] reads exactly
//! the texts that [`Display`](core::fmt::Display) writes.

mod builder;
mod derived;
mod error;
mod header;

use alloc::string::String;
use core::fmt;
use core::str::FromStr;

pub use builder::{HASHED_ID_PREFIX, id_from_fields};
pub use derived::DERIVED_ID_LABEL;
pub use error::{KeyError, KeyErrorKind};
pub use header::parse_header;

/// The longest kind, in bytes.
pub const KIND_MAX_LEN: usize = 32;
/// The longest scope, in bytes.
pub const SCOPE_MAX_LEN: usize = 64;
/// The longest id, in bytes.
pub const ID_MAX_LEN: usize = 64;

/// One of the three parts of an [`IdempotencyKey`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum KeyPart {
    /// The operation, e.g. `order.create`.
    Kind,
    /// Whose key it is: a tenant, user or client.
    Scope,
    /// Which attempt: the client's key, a business id, or a derived id.
    Id,
}

impl KeyPart {
    /// The part's name: `"kind"`, `"scope"` or `"id"`.
    pub const fn name(self) -> &'static str {
        match self {
            Self::Kind => "kind",
            Self::Scope => "scope",
            Self::Id => "id",
        }
    }

    /// The part's length limit in bytes.
    pub const fn max_len(self) -> usize {
        match self {
            Self::Kind => KIND_MAX_LEN,
            Self::Scope => SCOPE_MAX_LEN,
            Self::Id => ID_MAX_LEN,
        }
    }

    /// The part's character set, in words.
    pub const fn charset(self) -> &'static str {
        match self {
            Self::Kind => "a kind is a-z, 0-9, '.', '_' and '-'",
            Self::Scope | Self::Id => "printable ASCII without spaces",
        }
    }

    /// Whether `byte` belongs to the part's character set.
    pub const fn allows(self, byte: u8) -> bool {
        match self {
            Self::Kind => matches!(byte, b'a'..=b'z' | b'0'..=b'9' | b'.' | b'_' | b'-'),
            Self::Scope | Self::Id => matches!(byte, 0x21..=0x7E),
        }
    }

    /// Checks `value` against the part's rules: not empty, at most
    /// [`max_len`](Self::max_len) bytes, only allowed characters.
    pub fn validate(self, value: &str) -> Result<(), KeyError> {
        self.validate_bytes(value.as_bytes())
    }

    pub(crate) fn validate_bytes(self, value: &[u8]) -> Result<(), KeyError> {
        if value.is_empty() {
            return Err(KeyError::empty(self));
        }
        if value.len() > self.max_len() {
            return Err(KeyError::too_long(self, value.len()));
        }
        match value.iter().position(|&b| !self.allows(b)) {
            Some(position) => Err(KeyError::invalid_character(self, value, position)),
            None => Ok(()),
        }
    }
}

/// A validated idempotency key: kind, scope and id.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct IdempotencyKey {
    kind: String,
    scope: String,
    id: String,
}

impl IdempotencyKey {
    /// A key from its three parts, each checked against its rules.
    pub fn new(kind: &str, scope: &str, id: &str) -> Result<Self, KeyError> {
        KeyPart::Kind.validate(kind)?;
        KeyPart::Scope.validate(scope)?;
        KeyPart::Id.validate(id)?;
        Ok(Self {
            kind: String::from(kind),
            scope: String::from(scope),
            id: String::from(id),
        })
    }

    /// A key whose id is the value of an `Idempotency-Key` header (see
    /// [`parse_header`]).
    pub fn from_header(kind: &str, scope: &str, header: &[u8]) -> Result<Self, KeyError> {
        KeyPart::Kind.validate(kind)?;
        KeyPart::Scope.validate(scope)?;
        let id = parse_header(header)?;
        Ok(Self {
            kind: String::from(kind),
            scope: String::from(scope),
            id,
        })
    }

    /// The operation.
    pub fn kind(&self) -> &str {
        &self.kind
    }

    /// Whose key it is.
    pub fn scope(&self) -> &str {
        &self.scope
    }

    /// Which attempt.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// Reads the canonical text `kind:scope:id` (see the module docs).
    pub fn parse(text: &[u8]) -> Result<Self, KeyError> {
        let (kind, rest) = split_at_colon(text, 0)?;
        let scope_at = kind.len() + 1;
        let (escaped_scope, id) = split_at_colon(rest, scope_at)?;
        let scope = unescape_scope(escaped_scope, scope_at)?;
        KeyPart::Kind.validate_bytes(kind)?;
        KeyPart::Scope.validate(&scope)?;
        KeyPart::Id.validate_bytes(id)?;
        Ok(Self {
            kind: ascii_string(kind),
            scope,
            id: ascii_string(id),
        })
    }
}

/// Splits at the first `:`; `offset` is where `text` starts in the key text.
fn split_at_colon(text: &[u8], offset: usize) -> Result<(&[u8], &[u8]), KeyError> {
    match text.iter().position(|&b| b == b':') {
        Some(at) => Ok((&text[..at], &text[at + 1..])),
        None => Err(KeyError::text(
            "expected kind:scope:id, a ':' is missing",
            Some(offset + text.len()),
        )),
    }
}

/// Reverses the scope escaping (`%25` → `%`, `%3A` → `:`), accepting no
/// other `%` sequence so that every key has exactly one text.
fn unescape_scope(escaped: &[u8], offset: usize) -> Result<String, KeyError> {
    let mut scope = String::with_capacity(escaped.len());
    let mut i = 0;
    while let Some(&byte) = escaped.get(i) {
        let (decoded, width) = match (byte, escaped.get(i + 1..i + 3)) {
            (b'%', Some(b"25")) => ('%', 3),
            (b'%', Some(b"3A")) => (':', 3),
            (b'%', _) => {
                return Err(KeyError::text(
                    "in the scope only %25 and %3A may follow '%'",
                    Some(offset + i),
                ));
            }
            _ if !KeyPart::Scope.allows(byte) => {
                return Err(KeyError::invalid_character(KeyPart::Scope, escaped, i));
            }
            _ => (char::from(byte), 1),
        };
        scope.push(decoded);
        i += width;
    }
    Ok(scope)
}

/// A `String` from bytes already checked to be printable ASCII.
fn ascii_string(bytes: &[u8]) -> String {
    bytes.iter().map(|&b| char::from(b)).collect()
}

impl fmt::Display for IdempotencyKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.kind)?;
        f.write_str(":")?;
        for c in self.scope.chars() {
            match c {
                '%' => f.write_str("%25")?,
                ':' => f.write_str("%3A")?,
                _ => fmt::Write::write_char(f, c)?,
            }
        }
        f.write_str(":")?;
        f.write_str(&self.id)
    }
}

impl FromStr for IdempotencyKey {
    type Err = KeyError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        Self::parse(text.as_bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;
    use proptest::prelude::*;

    #[test]
    fn parts_are_validated() {
        let key = IdempotencyKey::new("order.create", "user:123", "a'b\"c;--%").unwrap();
        assert_eq!(
            (key.kind(), key.scope(), key.id()),
            ("order.create", "user:123", "a'b\"c;--%")
        );
        fn err(kind: &str, scope: &str, id: &str) -> KeyError {
            IdempotencyKey::new(kind, scope, id).unwrap_err()
        }
        assert_eq!(err("", "s", "i").code(), "key.empty");
        assert_eq!(err("k", "", "i").part(), Some(KeyPart::Scope));
        assert_eq!(err("k", "s", &"x".repeat(65)).code(), "key.too_long");
        assert!(IdempotencyKey::new(&"k".repeat(32), &"s".repeat(64), &"i".repeat(64)).is_ok());
        assert_eq!(err(&"k".repeat(33), "s", "i").part(), Some(KeyPart::Kind));
        let e = err("Order", "s", "i");
        assert_eq!(
            (e.code(), e.part(), e.position()),
            ("key.invalid_character", Some(KeyPart::Kind), Some(0))
        );
        assert_eq!(
            err("k", "s", "ab cd").to_string(),
            "character U+0020 at position 2 of the id is not allowed (printable ASCII without spaces)"
        );
        assert_eq!(
            err("k", "caf\u{e9}", "i").to_string(),
            "character U+00E9 at position 3 of the scope is not allowed (printable ASCII without spaces)"
        );
        assert_eq!(
            err("k", "s", &"x".repeat(65)).to_string(),
            "the id of an idempotency key is 65 bytes long, at most 64 allowed"
        );
    }

    #[test]
    fn canonical_text() {
        let key = IdempotencyKey::new("order.create", "auth0|u:1%2", "k:1").unwrap();
        assert_eq!(key.to_string(), "order.create:auth0|u%3A1%252:k:1");
        assert_eq!("order.create:auth0|u%3A1%252:k:1".parse(), Ok(key));
        for (bad, code) in [
            ("order.create", "key.invalid_text"),
            ("order.create:scope", "key.invalid_text"),
            ("k:s%3a:i", "key.invalid_text"),
            ("k:s%:i", "key.invalid_text"),
            ("k:s%41:i", "key.invalid_text"),
            ("k::i", "key.empty"),
            ("K:s:i", "key.invalid_character"),
            ("k:s:", "key.empty"),
            ("k:s t:i", "key.invalid_character"),
        ] {
            assert_eq!(
                bad.parse::<IdempotencyKey>().unwrap_err().code(),
                code,
                "{bad}"
            );
        }
    }

    proptest! {
        #[test]
        fn text_round_trip(kind in "[a-z0-9._-]{1,32}", scope in "[!-~]{1,64}", id in "[!-~]{1,64}") {
            let key = IdempotencyKey::new(&kind, &scope, &id).unwrap();
            let text = key.to_string();
            prop_assert_eq!(text.parse::<IdempotencyKey>(), Ok(key));
        }

        #[test]
        fn text_is_injective(a in ("[a-z:]{1,3}", "[a:%]{1,4}", "[a:%]{1,4}"),
                             b in ("[a-z:]{1,3}", "[a:%]{1,4}", "[a:%]{1,4}")) {
            if let (Ok(x), Ok(y)) = (IdempotencyKey::new(&a.0, &a.1, &a.2), IdempotencyKey::new(&b.0, &b.1, &b.2)) {
                prop_assert_eq!(x == y, x.to_string() == y.to_string());
            }
        }

        #[test]
        fn arbitrary_text_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..80)) {
            if let Ok(key) = IdempotencyKey::parse(&bytes) {
                let text = key.to_string();
                prop_assert_eq!(text.as_bytes(), &bytes[..]);
            }
        }
    }
}
