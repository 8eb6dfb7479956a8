//! The one error type every export returns: a core error's concern, its
//! stable code, its message and, where the core reports them, the part and
//! byte position at fault.

use core::fmt;

/// A failure reported by the core, by concern.
///
/// Every variant carries the same fields: `code`, the core's stable dotted
/// code (`"uuid7.wrong_version"`) that the shared vectors name; `detail`,
/// the core's one-line message; `part`, the part of the input at fault
/// (`"scope"` for a key) and `position`, the zero-based byte offset of the
/// problem, when the core reports them; `problem`, the HTTP problem the
/// core maps the error to, when it names one. Hosts map the code to their own
/// error classes.
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Error)]
pub enum MintidError {
    /// A value passed across the boundary that no core type can hold, such as
    /// a byte string of the wrong length (`argument.*` codes).
    Argument {
        /// The stable dotted code.
        code: String,
        /// What was wrong, with the value.
        detail: String,
        /// The part of the input at fault, if any.
        part: Option<String>,
        /// The byte offset of the problem, if any.
        position: Option<u64>,
        /// The HTTP problem (its stable name, e.g. `grant_expired`) a request
        /// failing this way answers with, when the core names one.
        problem: Option<String>,
    },
    /// Snowflake layouts, IDs and generators (`snowflake.*`).
    Snowflake {
        /// The stable dotted code.
        code: String,
        /// What was wrong, with the value.
        detail: String,
        /// The part of the input at fault, if any.
        part: Option<String>,
        /// The byte offset of the problem, if any.
        position: Option<u64>,
        /// The HTTP problem (its stable name, e.g. `grant_expired`) a request
        /// failing this way answers with, when the core names one.
        problem: Option<String>,
    },
    /// UUID text (`uuid.*`).
    Uuid {
        /// The stable dotted code.
        code: String,
        /// What was wrong, with the value.
        detail: String,
        /// The part of the input at fault, if any.
        part: Option<String>,
        /// The byte offset of the problem, if any.
        position: Option<u64>,
        /// The HTTP problem (its stable name, e.g. `grant_expired`) a request
        /// failing this way answers with, when the core names one.
        problem: Option<String>,
    },
    /// UUIDv7 values and generators (`uuid7.*`).
    Uuid7 {
        /// The stable dotted code.
        code: String,
        /// What was wrong, with the value.
        detail: String,
        /// The part of the input at fault, if any.
        part: Option<String>,
        /// The byte offset of the problem, if any.
        position: Option<u64>,
        /// The HTTP problem (its stable name, e.g. `grant_expired`) a request
        /// failing this way answers with, when the core names one.
        problem: Option<String>,
    },
    /// Idempotency keys (`key.*`).
    Key {
        /// The stable dotted code.
        code: String,
        /// What was wrong, with the value.
        detail: String,
        /// The part of the input at fault, if any.
        part: Option<String>,
        /// The byte offset of the problem, if any.
        position: Option<u64>,
        /// The HTTP problem (its stable name, e.g. `grant_expired`) a request
        /// failing this way answers with, when the core names one.
        problem: Option<String>,
    },
    /// Request IDs, grants and key rings (`request_id.*`).
    RequestId {
        /// The stable dotted code.
        code: String,
        /// What was wrong, with the value.
        detail: String,
        /// The part of the input at fault, if any.
        part: Option<String>,
        /// The byte offset of the problem, if any.
        position: Option<u64>,
        /// The HTTP problem (its stable name, e.g. `grant_expired`) a request
        /// failing this way answers with, when the core names one.
        problem: Option<String>,
    },
    /// The idempotency record state machine (`record.*`).
    Record {
        /// The stable dotted code.
        code: String,
        /// What was wrong, with the value.
        detail: String,
        /// The part of the input at fault, if any.
        part: Option<String>,
        /// The byte offset of the problem, if any.
        position: Option<u64>,
        /// The HTTP problem (its stable name, e.g. `grant_expired`) a request
        /// failing this way answers with, when the core names one.
        problem: Option<String>,
    },
    /// Worker-id leases (`lease.*`).
    Lease {
        /// The stable dotted code.
        code: String,
        /// What was wrong, with the value.
        detail: String,
        /// The part of the input at fault, if any.
        part: Option<String>,
        /// The byte offset of the problem, if any.
        position: Option<u64>,
        /// The HTTP problem (its stable name, e.g. `grant_expired`) a request
        /// failing this way answers with, when the core names one.
        problem: Option<String>,
    },
    /// Segment allocators (`segment.*`).
    Segment {
        /// The stable dotted code.
        code: String,
        /// What was wrong, with the value.
        detail: String,
        /// The part of the input at fault, if any.
        part: Option<String>,
        /// The byte offset of the problem, if any.
        position: Option<u64>,
        /// The HTTP problem (its stable name, e.g. `grant_expired`) a request
        /// failing this way answers with, when the core names one.
        problem: Option<String>,
    },
    /// The outbox relay (`outbox.*`).
    Outbox {
        /// The stable dotted code.
        code: String,
        /// What was wrong, with the value.
        detail: String,
        /// The part of the input at fault, if any.
        part: Option<String>,
        /// The byte offset of the problem, if any.
        position: Option<u64>,
        /// The HTTP problem (its stable name, e.g. `grant_expired`) a request
        /// failing this way answers with, when the core names one.
        problem: Option<String>,
    },
    /// The HTTP integrations' shared rules (`http.*`).
    Http {
        /// The stable dotted code.
        code: String,
        /// What was wrong, with the value.
        detail: String,
        /// The part of the input at fault, if any.
        part: Option<String>,
        /// The byte offset of the problem, if any.
        position: Option<u64>,
        /// The HTTP problem (its stable name, e.g. `grant_expired`) a request
        /// failing this way answers with, when the core names one.
        problem: Option<String>,
    },
    /// The store drivers (`store.*`): the database unavailable, a response
    /// that cannot be stored, a lost record lease, a failed query.
    Store {
        /// The stable dotted code.
        code: String,
        /// What was wrong (never the database driver's text).
        detail: String,
        /// The class of the database error behind it (`connection_lost`, …), if any.
        part: Option<String>,
        /// Always `None`.
        position: Option<u64>,
        /// The HTTP problem a request failing this way answers with.
        problem: Option<String>,
    },
    /// Payload fingerprints (`fingerprint.*`).
    Fingerprint {
        /// The stable dotted code.
        code: String,
        /// What was wrong, with the value.
        detail: String,
        /// The part of the input at fault, if any.
        part: Option<String>,
        /// The byte offset of the problem, if any.
        position: Option<u64>,
        /// The HTTP problem (its stable name, e.g. `grant_expired`) a request
        /// failing this way answers with, when the core names one.
        problem: Option<String>,
    },
}

/// The fields every variant carries.
struct Fields {
    code: String,
    detail: String,
    part: Option<String>,
    position: Option<u64>,
    problem: Option<String>,
}

impl Fields {
    fn new(code: &str, detail: impl fmt::Display) -> Self {
        Self {
            code: code.into(),
            detail: detail.to_string(),
            part: None,
            position: None,
            problem: None,
        }
    }

    fn answering(mut self, problem: Option<mintid::record::Problem>) -> Self {
        self.problem = problem.map(|p| p.name().into());
        self
    }

    fn at(mut self, part: Option<&str>, position: Option<usize>) -> Self {
        self.part = part.map(Into::into);
        self.position = position.and_then(|p| u64::try_from(p).ok());
        self
    }
}

macro_rules! variant {
    ($variant:ident, $fields:expr) => {{
        let Fields {
            code,
            detail,
            part,
            position,
            problem,
        } = $fields;
        MintidError::$variant {
            code,
            detail,
            part,
            position,
            problem,
        }
    }};
}

impl MintidError {
    /// The stable dotted code.
    pub fn code(&self) -> &str {
        match self {
            Self::Argument { code, .. }
            | Self::Snowflake { code, .. }
            | Self::Uuid { code, .. }
            | Self::Uuid7 { code, .. }
            | Self::Key { code, .. }
            | Self::RequestId { code, .. }
            | Self::Record { code, .. }
            | Self::Lease { code, .. }
            | Self::Segment { code, .. }
            | Self::Outbox { code, .. }
            | Self::Fingerprint { code, .. }
            | Self::Http { code, .. }
            | Self::Store { code, .. } => code,
        }
    }

    /// The concern: the variant's name in snake case (`argument`, …, `store`).
    pub fn concern(&self) -> &'static str {
        match self {
            Self::Argument { .. } => "argument",
            Self::Snowflake { .. } => "snowflake",
            Self::Uuid { .. } => "uuid",
            Self::Uuid7 { .. } => "uuid7",
            Self::Key { .. } => "key",
            Self::RequestId { .. } => "request_id",
            Self::Record { .. } => "record",
            Self::Lease { .. } => "lease",
            Self::Segment { .. } => "segment",
            Self::Outbox { .. } => "outbox",
            Self::Fingerprint { .. } => "fingerprint",
            Self::Http { .. } => "http",
            Self::Store { code, .. } => ["inbox", "transition"]
                .into_iter()
                .find(|concern| {
                    code.strip_prefix(concern)
                        .is_some_and(|rest| rest.starts_with('.'))
                })
                .unwrap_or("store"),
        }
    }

    /// Where the problem is and what it answers: `part`, `position`, `problem`.
    pub fn place(&self) -> (Option<&str>, Option<u64>, Option<&str>) {
        match self {
            Self::Argument {
                part,
                position,
                problem,
                ..
            }
            | Self::Snowflake {
                part,
                position,
                problem,
                ..
            }
            | Self::Uuid {
                part,
                position,
                problem,
                ..
            }
            | Self::Uuid7 {
                part,
                position,
                problem,
                ..
            }
            | Self::Key {
                part,
                position,
                problem,
                ..
            }
            | Self::RequestId {
                part,
                position,
                problem,
                ..
            }
            | Self::Record {
                part,
                position,
                problem,
                ..
            }
            | Self::Lease {
                part,
                position,
                problem,
                ..
            }
            | Self::Segment {
                part,
                position,
                problem,
                ..
            }
            | Self::Outbox {
                part,
                position,
                problem,
                ..
            }
            | Self::Fingerprint {
                part,
                position,
                problem,
                ..
            }
            | Self::Http {
                part,
                position,
                problem,
                ..
            }
            | Self::Store {
                part,
                position,
                problem,
                ..
            } => (part.as_deref(), *position, problem.as_deref()),
        }
    }

    /// The core's message.
    pub fn detail(&self) -> &str {
        match self {
            Self::Argument { detail, .. }
            | Self::Snowflake { detail, .. }
            | Self::Uuid { detail, .. }
            | Self::Uuid7 { detail, .. }
            | Self::Key { detail, .. }
            | Self::RequestId { detail, .. }
            | Self::Record { detail, .. }
            | Self::Lease { detail, .. }
            | Self::Segment { detail, .. }
            | Self::Outbox { detail, .. }
            | Self::Fingerprint { detail, .. }
            | Self::Http { detail, .. }
            | Self::Store { detail, .. } => detail,
        }
    }

    /// An `argument.*` error.
    pub(crate) fn argument(code: &str, detail: impl fmt::Display) -> Self {
        variant!(Argument, Fields::new(code, detail))
    }

    /// A byte string that must be exactly `expected` bytes long was `found` long.
    pub(crate) fn byte_length(what: &str, expected: usize, found: usize) -> Self {
        Self::argument(
            "argument.byte_length",
            format_args!("{what} must be {expected} bytes, got {found}"),
        )
    }
}

impl fmt::Display for MintidError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code(), self.detail())
    }
}

impl std::error::Error for MintidError {}

impl From<mintid::SnowflakeError> for MintidError {
    fn from(error: mintid::SnowflakeError) -> Self {
        variant!(Snowflake, Fields::new(error.code(), error))
    }
}

impl From<mintid::UuidParseError> for MintidError {
    fn from(error: mintid::UuidParseError) -> Self {
        variant!(Uuid, Fields::new(error.code(), error))
    }
}

impl From<mintid::Uuid7Error> for MintidError {
    fn from(error: mintid::Uuid7Error) -> Self {
        variant!(Uuid7, Fields::new(error.code(), error))
    }
}

impl From<mintid::key::KeyError> for MintidError {
    fn from(error: mintid::key::KeyError) -> Self {
        let (part, position) = (
            error.part().map(mintid::key::KeyPart::name),
            error.position(),
        );
        variant!(Key, Fields::new(error.code(), error).at(part, position))
    }
}

impl From<mintid::fingerprint::FingerprintError> for MintidError {
    fn from(error: mintid::fingerprint::FingerprintError) -> Self {
        let position = error.position();
        variant!(
            Fingerprint,
            Fields::new(error.code(), error).at(None, position)
        )
    }
}

impl From<mintid::request_id::RequestIdError> for MintidError {
    fn from(error: mintid::request_id::RequestIdError) -> Self {
        let problem = error.problem();
        variant!(
            RequestId,
            Fields::new(error.code(), error).answering(problem)
        )
    }
}

impl From<mintid::record::RecordError> for MintidError {
    fn from(error: mintid::record::RecordError) -> Self {
        variant!(Record, Fields::new(error.code(), error))
    }
}

impl From<mintid::lease::LeaseError> for MintidError {
    fn from(error: mintid::lease::LeaseError) -> Self {
        variant!(Lease, Fields::new(error.code(), error))
    }
}

impl From<mintid::segment::SegmentError> for MintidError {
    fn from(error: mintid::segment::SegmentError) -> Self {
        variant!(Segment, Fields::new(error.code(), error))
    }
}

impl From<mintid::outbox::OutboxError> for MintidError {
    fn from(error: mintid::outbox::OutboxError) -> Self {
        variant!(Outbox, Fields::new(error.code(), error))
    }
}

impl From<mintid::http::HttpError> for MintidError {
    fn from(error: mintid::http::HttpError) -> Self {
        let (position, problem) = (error.position(), error.problem());
        variant!(
            Http,
            Fields::new(error.code(), error)
                .at(None, position)
                .answering(problem)
        )
    }
}

impl From<mintid::store::DriverError> for MintidError {
    fn from(error: mintid::store::DriverError) -> Self {
        match error {
            mintid::store::DriverError::Record(error) => error.into(),
            mintid::store::DriverError::Lease(error) => error.into(),
            mintid::store::DriverError::Segment(error) => error.into(),
            mintid::store::DriverError::Outbox(error) => error.into(),
            // The receiving side's concerns have no uniffi variant yet (the
            // hosts' typed errors come with their inbox and transition APIs):
            // they travel as `Store` with their own code, and `concern()`
            // reads it from the code.
            mintid::store::DriverError::Inbox(error) => {
                variant!(Store, Fields::new(error.code(), error))
            }
            mintid::store::DriverError::Transition(error) => {
                variant!(Store, Fields::new(error.code(), error))
            }
            mintid::store::DriverError::Store(error) => {
                let class = error.db_class().map(|class| class.as_str());
                let problem = error.kind().problem();
                variant!(
                    Store,
                    Fields::new(error.code(), &error)
                        .at(class, None)
                        .answering(problem)
                )
            }
        }
    }
}

/// Reads exactly `N` bytes, or fails with `argument.byte_length`.
pub(crate) fn fixed_bytes<const N: usize>(
    what: &str,
    bytes: &[u8],
) -> Result<[u8; N], MintidError> {
    <[u8; N]>::try_from(bytes).map_err(|_| MintidError::byte_length(what, N, bytes.len()))
}
