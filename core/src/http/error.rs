//! The one error type of the HTTP rules.

use alloc::string::String;
use core::fmt;

use crate::fingerprint::FingerprintError;
use crate::quote::QuotedStr;
use crate::record::Problem;

/// The longest prefix of a rejected text kept for the message.
const QUOTED_TEXT_MAX: usize = 40;

/// Why an HTTP rule refused its input. See [`kind`](HttpError::kind) and
/// [`code`](HttpError::code).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpError {
    detail: Detail,
}

/// The kinds of [`HttpError`], each with a stable [`code`](HttpErrorKind::code).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum HttpErrorKind {
    /// `http.invalid_method`: a method that cannot name a key kind (not 1–16
    /// ASCII letters, digits, `-`, `_` or `.`).
    InvalidMethod,
    /// `http.invalid_status`: a status outside 100–599, or one without a
    /// plain-status problem title.
    InvalidStatus,
    /// `http.invalid_header`: a stored header whose name is not an HTTP token
    /// or whose value holds CR, LF or NUL.
    InvalidHeader,
    /// `http.bad_stored_response`: stored bytes that are not a
    /// `mintid-http/1` envelope (written by something else, or corrupted).
    BadStoredResponse,
    /// `http.malformed_body`: a request whose content type is JSON and
    /// whose body is not JSON; answered 400 `malformed_body`.
    MalformedBody,
    /// `http.body_consumed`: a covered request whose body something else
    /// read before the middleware (a body parser mounted first), so that it
    /// cannot be fingerprinted; the server's fault (see
    /// [`check_body_read`](crate::http::check_body_read)).
    BodyConsumed,
    /// `http.unauthenticated`: a covered request whose caller the scope
    /// function could not name (no logged-in user or tenant); answered 401
    /// (see [`admit_key`](crate::http::admit_key)).
    Unauthenticated,
    /// `http.missing_key`: a covered request without a header the route
    /// accepts a key from; answered 400 `missing_key`, the detail naming
    /// the accepted header(s).
    MissingKey,
}

impl HttpErrorKind {
    /// The stable dotted code of this kind.
    pub const fn code(self) -> &'static str {
        match self {
            Self::InvalidMethod => "http.invalid_method",
            Self::InvalidStatus => "http.invalid_status",
            Self::InvalidHeader => "http.invalid_header",
            Self::BadStoredResponse => "http.bad_stored_response",
            Self::MalformedBody => "http.malformed_body",
            Self::BodyConsumed => "http.body_consumed",
            Self::Unauthenticated => "http.unauthenticated",
            Self::MissingKey => "http.missing_key",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Detail {
    InvalidMethod {
        text: String,
        len: usize,
    },
    InvalidStatus {
        status: u16,
        reason: &'static str,
    },
    InvalidHeader {
        name: String,
        len: usize,
        reason: &'static str,
    },
    BadStoredResponse {
        position: usize,
        reason: &'static str,
    },
    MalformedBody {
        cause: FingerprintError,
    },
    BodyConsumed {
        declared: Option<u64>,
        read: u64,
        fix: String,
    },
    Unauthenticated,
    MissingKey {
        expected: String,
        ignored: &'static str,
    },
}

/// At most [`QUOTED_TEXT_MAX`] bytes of `text`, cut at a character boundary.
fn prefix(text: &str) -> String {
    text.char_indices()
        .take_while(|(at, c)| at + c.len_utf8() <= QUOTED_TEXT_MAX)
        .map(|(_, c)| c)
        .collect()
}

impl HttpError {
    pub(crate) fn invalid_method(method: &str) -> Self {
        Self {
            detail: Detail::InvalidMethod {
                text: prefix(method),
                len: method.len(),
            },
        }
    }

    pub(crate) const fn invalid_status(status: u16, reason: &'static str) -> Self {
        Self {
            detail: Detail::InvalidStatus { status, reason },
        }
    }

    pub(crate) fn invalid_header(name: &str, reason: &'static str) -> Self {
        Self {
            detail: Detail::InvalidHeader {
                name: prefix(name),
                len: name.len(),
                reason,
            },
        }
    }

    pub(crate) const fn bad_stored_response(position: usize, reason: &'static str) -> Self {
        Self {
            detail: Detail::BadStoredResponse { position, reason },
        }
    }

    pub(crate) const fn malformed_body(cause: FingerprintError) -> Self {
        Self {
            detail: Detail::MalformedBody { cause },
        }
    }

    pub(crate) fn body_consumed(declared: Option<u64>, read: u64, fix: &str) -> Self {
        Self {
            detail: Detail::BodyConsumed {
                declared,
                read,
                fix: String::from(fix),
            },
        }
    }

    pub(crate) const fn unauthenticated() -> Self {
        Self {
            detail: Detail::Unauthenticated,
        }
    }

    pub(crate) const fn missing_key(expected: String, ignored: &'static str) -> Self {
        Self {
            detail: Detail::MissingKey { expected, ignored },
        }
    }

    /// What went wrong.
    pub const fn kind(&self) -> HttpErrorKind {
        match self.detail {
            Detail::InvalidMethod { .. } => HttpErrorKind::InvalidMethod,
            Detail::InvalidStatus { .. } => HttpErrorKind::InvalidStatus,
            Detail::InvalidHeader { .. } => HttpErrorKind::InvalidHeader,
            Detail::BadStoredResponse { .. } => HttpErrorKind::BadStoredResponse,
            Detail::MalformedBody { .. } => HttpErrorKind::MalformedBody,
            Detail::BodyConsumed { .. } => HttpErrorKind::BodyConsumed,
            Detail::Unauthenticated => HttpErrorKind::Unauthenticated,
            Detail::MissingKey { .. } => HttpErrorKind::MissingKey,
        }
    }

    /// The problem a request failing this way is answered with: for
    /// [`HttpErrorKind::MalformedBody`], the client's [`Problem::MalformedBody`];
    /// for [`HttpErrorKind::MissingKey`], [`Problem::MissingKey`]; `None` for
    /// the others ([`HttpErrorKind::Unauthenticated`] is a plain 401, the
    /// rest are the server's own faults).
    pub const fn problem(&self) -> Option<Problem> {
        match self.detail {
            Detail::MalformedBody { .. } => Some(Problem::MalformedBody),
            Detail::MissingKey { .. } => Some(Problem::MissingKey),
            _ => None,
        }
    }

    /// The status a client is answered with when the error is the client's:
    /// its problem's status, or 401 for [`HttpErrorKind::Unauthenticated`];
    /// `None` for the server's own faults (the framework's 500).
    pub const fn status(&self) -> Option<u16> {
        match (&self.detail, self.problem()) {
            (_, Some(problem)) => Some(problem.status()),
            (Detail::Unauthenticated, None) => Some(401),
            _ => None,
        }
    }

    /// The stable dotted code, e.g. `"http.bad_stored_response"`.
    pub const fn code(&self) -> &'static str {
        self.kind().code()
    }

    /// For [`HttpErrorKind::BadStoredResponse`]: the byte offset in the
    /// stored bytes where reading failed; for
    /// [`HttpErrorKind::MalformedBody`]: the byte offset in the body where
    /// it stops being JSON.
    pub fn position(&self) -> Option<usize> {
        match &self.detail {
            Detail::BadStoredResponse { position, .. } => Some(*position),
            Detail::MalformedBody { cause } => cause.position(),
            _ => None,
        }
    }
}

impl fmt::Display for HttpError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.detail {
            Detail::InvalidMethod { text, len } => {
                write!(f, "the method {}", QuotedStr(text))?;
                if text.len() < *len {
                    write!(f, " (first {} of {len} bytes)", text.len())?;
                }
                f.write_str(
                    " cannot name a key kind: it must be 1 to 16 ASCII letters, digits, '-', '_' or '.'",
                )
            }
            Detail::InvalidStatus { status, reason } => {
                write!(f, "the status {status} {reason}")
            }
            Detail::InvalidHeader { name, len, reason } => {
                write!(f, "the header {}", QuotedStr(name))?;
                if name.len() < *len {
                    write!(f, " (first {} of {len} bytes)", name.len())?;
                }
                write!(f, " cannot be stored: {reason}")
            }
            Detail::BadStoredResponse { position, reason } => write!(
                f,
                "the stored response is not a mintid-http/1 envelope: {reason} at byte {position}"
            ),
            Detail::MalformedBody { cause } => {
                write!(f, "the content type is JSON but the body is not: {cause}")
            }
            Detail::BodyConsumed {
                declared,
                read,
                fix,
            } => {
                f.write_str("the request declares a body (")?;
                match declared {
                    Some(length) => write!(f, "{length} bytes")?,
                    None => f.write_str("a transfer coding")?,
                }
                write!(
                    f,
                    ") but something read it before the idempotency middleware, which found {read} bytes left: \
                     it cannot be fingerprinted, and an empty fingerprint would replay another body's answer; {fix}"
                )
            }
            Detail::Unauthenticated => f.write_str(
                "the request has no authenticated caller (the scope function found none): \
                 idempotency keys are kept per caller; log in, then send it again",
            ),
            Detail::MissingKey { expected, ignored } => write!(
                f,
                "no idempotency key: this route takes it from {expected}{ignored}"
            ),
        }
    }
}

impl core::error::Error for HttpError {}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;

    #[test]
    fn codes_and_messages() {
        let error = HttpError::invalid_method("GET POST");
        assert_eq!(error.code(), "http.invalid_method");
        assert!(
            error
                .to_string()
                .starts_with("the method \"GET POST\" cannot")
        );
        let long = "x".repeat(100);
        assert!(
            HttpError::invalid_method(&long)
                .to_string()
                .contains("(first 40 of 100 bytes)")
        );
        let error = HttpError::bad_stored_response(3, "no blank line ends the head");
        assert_eq!(error.code(), "http.bad_stored_response");
        assert_eq!(error.position(), Some(3));
        assert_eq!(
            HttpError::invalid_status(99, "is not within 100-599").to_string(),
            "the status 99 is not within 100-599"
        );
        assert_eq!(
            HttpError::invalid_header("x\ny", "the name is not an HTTP token").code(),
            "http.invalid_header"
        );
        assert_eq!(HttpError::invalid_header("a", "b").position(), None);
    }
}
