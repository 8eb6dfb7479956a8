//! The one error type of request IDs, grants and key rings.

use core::fmt;

use crate::base64url::Base64UrlError;
use crate::record::Problem;
use crate::uuid7::Uuid7Error;

/// Why a request ID, a grant or a key ring operation was refused. See
/// [`kind`](RequestIdError::kind) and [`code`](RequestIdError::code).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestIdError {
    detail: Detail,
}

/// The kinds of [`RequestIdError`], each with a stable [`code`](RequestIdErrorKind::code).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum RequestIdErrorKind {
    /// `request_id.malformed`: not the text of a request ID.
    Malformed,
    /// `request_id.unsupported_version`: a format byte this version does not know.
    UnsupportedVersion,
    /// `request_id.unknown_key`: no key with this id in the ring.
    UnknownKey,
    /// `request_id.bad_tag`: the tag does not match: forged, tampered, or
    /// minted for another scope (indistinguishable by design).
    BadTag,
    /// `request_id.grant_expired`: the grant it was minted from has expired.
    GrantExpired,
    /// `request_id.too_old`: the UUIDv7 is older than the allowed age.
    TooOld,
    /// `request_id.in_future`: the UUIDv7 is later than now plus the allowed skew.
    InFuture,
    /// `request_id.invalid_scope`: a scope that is empty or longer than 64 bytes
    /// (the longest scope an idempotency key can carry).
    InvalidScope,
    /// `request_id.malformed_grant`: not the text of a grant.
    MalformedGrant,
    /// `request_id.weak_secret`: a server secret shorter than 32 bytes.
    WeakSecret,
    /// `request_id.duplicate_key_id`: the ring already has a key with this id.
    DuplicateKeyId,
    /// `request_id.current_key`: the current key cannot be retired.
    CurrentKey,
    /// `request_id.expiry_out_of_range`: an expiry of 2^48 ms or later.
    ExpiryOutOfRange,
}

impl RequestIdErrorKind {
    /// The stable dotted code of this kind.
    pub const fn code(self) -> &'static str {
        match self {
            Self::Malformed => "request_id.malformed",
            Self::UnsupportedVersion => "request_id.unsupported_version",
            Self::UnknownKey => "request_id.unknown_key",
            Self::BadTag => "request_id.bad_tag",
            Self::GrantExpired => "request_id.grant_expired",
            Self::TooOld => "request_id.too_old",
            Self::InFuture => "request_id.in_future",
            Self::InvalidScope => "request_id.invalid_scope",
            Self::MalformedGrant => "request_id.malformed_grant",
            Self::WeakSecret => "request_id.weak_secret",
            Self::DuplicateKeyId => "request_id.duplicate_key_id",
            Self::CurrentKey => "request_id.current_key",
            Self::ExpiryOutOfRange => "request_id.expiry_out_of_range",
        }
    }
}

/// What made a text malformed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Form {
    Length(usize),
    Base64(Base64UrlError),
    Uuid(Uuid7Error),
    /// The text of an unsigned request ID is not that of a UUIDv7.
    UnsignedText(Uuid7Error),
    /// A grant whose first byte names another format.
    GrantFormat(u8),
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Detail {
    Malformed(Form),
    UnsupportedVersion {
        format: u8,
    },
    UnknownKey {
        key_id: u32,
    },
    BadTag,
    GrantExpired {
        expires: u64,
        now: u64,
    },
    TooOld {
        timestamp: u64,
        now: u64,
        max_age: u64,
    },
    InFuture {
        timestamp: u64,
        now: u64,
        max_skew: u64,
    },
    InvalidScope {
        len: usize,
    },
    MalformedGrant(Form),
    WeakSecret {
        len: usize,
    },
    DuplicateKeyId {
        key_id: u32,
    },
    CurrentKey {
        key_id: u32,
    },
    ExpiryOutOfRange {
        expires: u64,
    },
}

impl RequestIdError {
    const fn new(detail: Detail) -> Self {
        Self { detail }
    }

    pub(super) const fn malformed(form: Form) -> Self {
        Self::new(Detail::Malformed(form))
    }

    pub(crate) const fn unsupported_version(format: u8) -> Self {
        Self::new(Detail::UnsupportedVersion { format })
    }

    pub(crate) const fn unknown_key(key_id: u32) -> Self {
        Self::new(Detail::UnknownKey { key_id })
    }

    pub(crate) const fn bad_tag() -> Self {
        Self::new(Detail::BadTag)
    }

    pub(crate) const fn grant_expired(expires: u64, now: u64) -> Self {
        Self::new(Detail::GrantExpired { expires, now })
    }

    pub(crate) const fn too_old(timestamp: u64, now: u64, max_age: u64) -> Self {
        Self::new(Detail::TooOld {
            timestamp,
            now,
            max_age,
        })
    }

    pub(crate) const fn in_future(timestamp: u64, now: u64, max_skew: u64) -> Self {
        Self::new(Detail::InFuture {
            timestamp,
            now,
            max_skew,
        })
    }

    pub(crate) const fn invalid_scope(len: usize) -> Self {
        Self::new(Detail::InvalidScope { len })
    }

    pub(super) const fn malformed_grant(form: Form) -> Self {
        Self::new(Detail::MalformedGrant(form))
    }

    pub(crate) const fn weak_secret(len: usize) -> Self {
        Self::new(Detail::WeakSecret { len })
    }

    pub(crate) const fn duplicate_key_id(key_id: u32) -> Self {
        Self::new(Detail::DuplicateKeyId { key_id })
    }

    pub(crate) const fn current_key(key_id: u32) -> Self {
        Self::new(Detail::CurrentKey { key_id })
    }

    pub(crate) const fn expiry_out_of_range(expires: u64) -> Self {
        Self::new(Detail::ExpiryOutOfRange { expires })
    }

    /// What went wrong.
    pub const fn kind(&self) -> RequestIdErrorKind {
        match self.detail {
            Detail::Malformed(_) => RequestIdErrorKind::Malformed,
            Detail::UnsupportedVersion { .. } => RequestIdErrorKind::UnsupportedVersion,
            Detail::UnknownKey { .. } => RequestIdErrorKind::UnknownKey,
            Detail::BadTag => RequestIdErrorKind::BadTag,
            Detail::GrantExpired { .. } => RequestIdErrorKind::GrantExpired,
            Detail::TooOld { .. } => RequestIdErrorKind::TooOld,
            Detail::InFuture { .. } => RequestIdErrorKind::InFuture,
            Detail::InvalidScope { .. } => RequestIdErrorKind::InvalidScope,
            Detail::MalformedGrant(_) => RequestIdErrorKind::MalformedGrant,
            Detail::WeakSecret { .. } => RequestIdErrorKind::WeakSecret,
            Detail::DuplicateKeyId { .. } => RequestIdErrorKind::DuplicateKeyId,
            Detail::CurrentKey { .. } => RequestIdErrorKind::CurrentKey,
            Detail::ExpiryOutOfRange { .. } => RequestIdErrorKind::ExpiryOutOfRange,
        }
    }

    /// The stable dotted code, e.g. `"request_id.bad_tag"`.
    pub const fn code(&self) -> &'static str {
        self.kind().code()
    }

    /// The HTTP problem to answer a request whose ID failed verification
    /// with; `None` for the key-ring and issuing errors, which are the
    /// server's own faults.
    pub const fn problem(&self) -> Option<Problem> {
        match self.kind() {
            RequestIdErrorKind::GrantExpired => Some(Problem::GrantExpired),
            RequestIdErrorKind::TooOld => Some(Problem::KeyTooOld),
            RequestIdErrorKind::Malformed
            | RequestIdErrorKind::UnsupportedVersion
            | RequestIdErrorKind::UnknownKey
            | RequestIdErrorKind::BadTag
            | RequestIdErrorKind::InFuture => Some(Problem::InvalidRequestId),
            RequestIdErrorKind::InvalidScope
            | RequestIdErrorKind::MalformedGrant
            | RequestIdErrorKind::WeakSecret
            | RequestIdErrorKind::DuplicateKeyId
            | RequestIdErrorKind::CurrentKey
            | RequestIdErrorKind::ExpiryOutOfRange => None,
        }
    }
}

impl fmt::Display for Form {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Form::Length(found) => write!(
                f,
                "it must be {} base64url characters, found {found}",
                super::TEXT_LEN
            ),
            Form::Base64(error) => write!(f, "{error}"),
            Form::Uuid(error) => write!(f, "the embedded UUID is not a UUIDv7: {error}"),
            Form::UnsignedText(error) => write!(f, "not the text of a UUIDv7: {error}"),
            Form::GrantFormat(format) => write!(
                f,
                "format byte 0x{format:02x} is not that of a version 1 grant (0x{:02x})",
                super::GRANT_FORMAT
            ),
        }
    }
}

impl fmt::Display for RequestIdError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.detail {
            Detail::Malformed(form) => write!(f, "malformed request ID: {form}"),
            Detail::UnsupportedVersion {
                format: super::GRANT_FORMAT,
            } => f.write_str(
                "this is a grant, not a request ID (a grant is a secret: mint IDs from it, \
                 never send it)",
            ),
            Detail::UnsupportedVersion { format } => write!(
                f,
                "unsupported request ID format byte 0x{format:02x} (version 1 is 0x{:02x})",
                super::REQUEST_ID_FORMAT
            ),
            Detail::UnknownKey { key_id } => write!(f, "unknown key id {key_id}"),
            Detail::BadTag => f.write_str(
                "request ID tag does not match: forged, altered, or minted for another scope",
            ),
            Detail::GrantExpired { expires, now } => write!(
                f,
                "the request ID's grant expired at {expires} ms (now {now} ms)"
            ),
            Detail::TooOld {
                timestamp,
                now,
                max_age,
            } => write!(
                f,
                "request ID minted at {timestamp} ms is older than {max_age} ms (now {now} ms)"
            ),
            Detail::InFuture {
                timestamp,
                now,
                max_skew,
            } => write!(
                f,
                "request ID minted at {timestamp} ms is more than {max_skew} ms ahead of now \
                 ({now} ms)"
            ),
            Detail::InvalidScope { len } => write!(
                f,
                "a scope must be 1 to {} bytes long, found {len}",
                super::SCOPE_MAX_LEN
            ),
            Detail::MalformedGrant(form) => write!(f, "malformed grant: {form}"),
            Detail::WeakSecret { len } => write!(
                f,
                "a server secret must have at least {} bytes, found {len}",
                super::SECRET_MIN_LEN
            ),
            Detail::DuplicateKeyId { key_id } => {
                write!(f, "the key ring already holds a key with id {key_id}")
            }
            Detail::CurrentKey { key_id } => write!(
                f,
                "key {key_id} is the current key and cannot be retired: rotate to another first"
            ),
            Detail::ExpiryOutOfRange { expires } => write!(
                f,
                "expiry {expires} ms does not fit in 48 bits (must be below {})",
                super::EXPIRY_LIMIT
            ),
        }
    }
}

impl core::error::Error for RequestIdError {}
