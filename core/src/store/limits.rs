//! The schema's limits, once: what the `CHECK` constraints of `schema/`
//! allow, enforced by the drivers before they write (so a write never fails
//! on a constraint after an operation ran). `tests/schema/` checks each
//! value against the constraints of every dialect.

use alloc::string::String;

/// The largest stored response body, in bytes (1 MiB).
pub const RESPONSE_BODY_MAX_BYTES: usize = 1_048_576;
/// The longest stored response content type, in bytes (printable ASCII).
pub const CONTENT_TYPE_MAX_BYTES: usize = 255;
/// The longest stored error text of a record, in UTF-8 bytes.
pub const RECORD_ERROR_MAX_BYTES: usize = 1024;
/// The longest stored error text of an outbox message, in UTF-8 bytes.
pub const OUTBOX_ERROR_MAX_BYTES: usize = 1024;
/// What ends an error text cut to its limit.
pub const TRUNCATION_MARKER: &str = "… [truncated]";

/// Every limit by name, for the tests that compare them with the schema's
/// constraints and for hosts that document them.
pub const ALL: [(&str, usize); 7] = [
    ("key.kind", crate::key::KIND_MAX_LEN),
    ("key.scope", crate::key::SCOPE_MAX_LEN),
    ("key.id", crate::key::ID_MAX_LEN),
    ("record.response_body", RESPONSE_BODY_MAX_BYTES),
    ("record.response_content_type", CONTENT_TYPE_MAX_BYTES),
    ("record.error", RECORD_ERROR_MAX_BYTES),
    ("outbox.last_error", OUTBOX_ERROR_MAX_BYTES),
];

/// `text` if it has at most `max_bytes` UTF-8 bytes; otherwise its longest
/// prefix that ends on a character boundary and leaves room for
/// [`TRUNCATION_MARKER`], followed by the marker. The result never has more
/// than `max_bytes` bytes (`max_bytes` must be at least the marker's length).
///
/// ```
/// use mintid::store::limits::{truncate_error, TRUNCATION_MARKER};
/// assert_eq!(truncate_error("short", 1024), "short");
/// let long = "é".repeat(600); // 1200 bytes
/// let cut = truncate_error(&long, 1024);
/// assert!(cut.len() <= 1024 && cut.ends_with(TRUNCATION_MARKER));
/// ```
pub fn truncate_error(text: &str, max_bytes: usize) -> String {
    if text.len() <= max_bytes {
        return String::from(text);
    }
    let mut end = max_bytes.saturating_sub(TRUNCATION_MARKER.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let mut cut = String::with_capacity(end + TRUNCATION_MARKER.len());
    cut.push_str(&text[..end]);
    cut.push_str(TRUNCATION_MARKER);
    cut
}

/// The longest stored owner of a worker lease, in UTF-8 bytes.
pub const LEASE_OWNER_MAX_BYTES: usize = 255;

/// The longest a host's shutdown waits for a background task under way (a
/// leased generator's heartbeat, a segment source's fetch, a record's
/// heartbeat) before it goes on without it, in milliseconds
/// (`docs/spec.md`, "Limits"): the task's late result is dropped, and
/// whatever it held ends at its deadline.
pub const SHUTDOWN_WAIT_MILLIS: u64 = 10_000;

/// What the core does with an argument outside its bounds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Beyond {
    /// Refused with the error code named, before any write.
    Refused(&'static str),
    /// Raised to the least value (a batch size of 0 runs batches of 1).
    Raised,
    /// Made storable and cut to the most bytes ([`storable_text`]); an
    /// empty text becomes one U+FFFD.
    Cut,
}

/// One argument a host passes to a driver, its bounds and the rule for a
/// value beyond them: the one place an argument is checked (no host checks
/// one on its own).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ArgumentLimit {
    /// The argument, as `driver.argument`.
    pub name: &'static str,
    /// The least value (bytes for a text).
    pub min: u64,
    /// The greatest value (bytes for a text).
    pub max: u64,
    /// What happens beyond the bounds.
    pub beyond: Beyond,
}

/// Every argument limit, by name (`tests/vectors/limits.json` holds its
/// cases, read by every host).
pub const ARGUMENTS: [ArgumentLimit; 4] = [
    ArgumentLimit {
        name: "lease.owner",
        min: 1,
        max: LEASE_OWNER_MAX_BYTES as u64,
        beyond: Beyond::Cut,
    },
    ArgumentLimit {
        name: "outbox.message_id",
        min: 0,
        max: i64::MAX as u64,
        beyond: Beyond::Refused("outbox.invalid_message"),
    },
    ArgumentLimit {
        name: "outbox_cleanup.batch_size",
        min: 1,
        max: i64::MAX as u64,
        beyond: Beyond::Raised,
    },
    ArgumentLimit {
        name: "record_cleanup.batch_size",
        min: 1,
        max: i64::MAX as u64,
        beyond: Beyond::Raised,
    },
];

/// A cleanup's batch size as the core runs it: at least 1, at most
/// 2^63 − 1 (the `record_cleanup.batch_size` and `outbox_cleanup.batch_size`
/// rows of [`ARGUMENTS`]).
///
/// ```
/// use mintid::store::limits::batch_size;
/// assert_eq!((batch_size(0), batch_size(500)), (1, 500));
/// ```
pub const fn batch_size(requested: u64) -> u64 {
    if requested == 0 {
        1
    } else if requested > i64::MAX as u64 {
        i64::MAX as u64
    } else {
        requested
    }
}

/// A worker lease's owner as stored (the `lease.owner` row of
/// [`ARGUMENTS`]): [`storable_text`] cut to [`LEASE_OWNER_MAX_BYTES`], and
/// one U+FFFD for an empty owner (the schema stores 1 to 255 bytes).
///
/// ```
/// use mintid::store::limits::lease_owner;
/// assert_eq!(lease_owner("pod-7"), "pod-7");
/// assert_eq!(lease_owner(""), "\u{FFFD}");
/// assert!(lease_owner(&"é".repeat(200)).len() <= 255);
/// ```
pub fn lease_owner(owner: &str) -> String {
    if owner.is_empty() {
        return String::from(char::REPLACEMENT_CHARACTER);
    }
    storable_text(owner, LEASE_OWNER_MAX_BYTES)
}

/// `text` made storable in every dialect, then cut to `max_bytes` as
/// [`truncate_error`] cuts: every U+0000 (which PostgreSQL cannot store in a
/// text column) becomes U+FFFD. The one rule for every text a driver writes
/// from a host's input (an operation's error, a send error, a lease owner),
/// applied before any host or database sees it (`docs/spec.md`, "Storable
/// text").
///
/// ```
/// use mintid::store::limits::storable_text;
/// assert_eq!(storable_text("card declined\0ref=7", 1024), "card declined\u{FFFD}ref=7");
/// ```
pub fn storable_text(text: &str, max_bytes: usize) -> String {
    if !text.contains('\0') {
        return truncate_error(text, max_bytes);
    }
    truncate_error(&text.replace('\0', "\u{FFFD}"), max_bytes)
}

/// [`storable_text`] of a text that crossed from a host as bytes that may
/// not be UTF-8: each invalid sequence becomes one U+FFFD (its maximal
/// subpart, as [`String::from_utf8_lossy`] does), except that a surrogate
/// encoded in three bytes (`ED A0..BF 80..BF`, what Python's
/// `surrogatepass` and Java's modified UTF-8 write for a lone surrogate)
/// becomes exactly one U+FFFD, as a UTF-16 host's lone surrogate does in
/// [`storable_text_utf16`]. Only the first `max_bytes + 4` bytes are read:
/// what was read is then longer than `max_bytes` (no sequence shrinks), so
/// the rest could only be cut off.
pub fn storable_text_from_bytes(bytes: &[u8], max_bytes: usize) -> String {
    let mut rest = &bytes[..bytes.len().min(max_bytes.saturating_add(4))];
    let mut text = String::with_capacity(rest.len());
    while !rest.is_empty() {
        match core::str::from_utf8(rest) {
            Ok(valid) => {
                text.push_str(valid);
                break;
            }
            Err(error) => {
                let (valid, after) = rest.split_at(error.valid_up_to());
                text.push_str(core::str::from_utf8(valid).unwrap_or_default());
                text.push(char::REPLACEMENT_CHARACTER);
                let skip = match after {
                    [0xED, 0xA0..=0xBF, 0x80..=0xBF, ..] => 3,
                    _ => error.error_len().unwrap_or(after.len()),
                };
                rest = &after[skip..];
            }
        }
    }
    storable_text(&text, max_bytes)
}

/// The text stored for a raised failure (an error an operation raised that
/// is not an operation failure its host knows), composed from the type's
/// name as the host shows it (Python `type(e).__name__`, JVM
/// `Class.simpleName`, JS `error.name`) and its message, both bytes that may
/// not be UTF-8: `"<type>: <message>"`; the type alone when the message is
/// empty; the message alone when the type is empty; `error` when both are;
/// then made storable and cut to [`RECORD_ERROR_MAX_BYTES`]
/// ([`storable_text_from_bytes`]). The one rule of every host
/// (`docs/spec.md`, "The wire").
///
/// ```
/// use mintid::store::limits::raised_text;
/// assert_eq!(raised_text(b"ValueError", b"bad input"), "ValueError: bad input");
/// assert_eq!(raised_text(b"IllegalStateException", b""), "IllegalStateException");
/// assert_eq!(raised_text(b"", b""), "error");
/// ```
pub fn raised_text(type_name: &[u8], message: &[u8]) -> String {
    let read = RECORD_ERROR_MAX_BYTES + 4;
    let composed = match (type_name.is_empty(), message.is_empty()) {
        (false, false) => {
            let mut text =
                alloc::vec::Vec::with_capacity(read.min(type_name.len() + 2 + message.len()));
            text.extend_from_slice(&type_name[..type_name.len().min(read)]);
            text.extend_from_slice(b": ");
            text.extend_from_slice(&message[..message.len().min(read)]);
            return storable_text_from_bytes(&text, RECORD_ERROR_MAX_BYTES);
        }
        (false, true) => type_name,
        (true, false) => message,
        (true, true) => b"error",
    };
    storable_text_from_bytes(composed, RECORD_ERROR_MAX_BYTES)
}

/// [`storable_text`] of a text that crossed from a UTF-16 host (JS, the
/// JVM) as code units: each lone surrogate becomes one U+FFFD. Only the
/// first `max_bytes + 4` units are read: each is at least one byte, so the
/// rest could only be cut off.
pub fn storable_text_utf16(units: &[u16], max_bytes: usize) -> String {
    let read = units.len().min(max_bytes.saturating_add(4));
    let text: String = char::decode_utf16(units[..read].iter().copied())
        .map(|unit| unit.unwrap_or(char::REPLACEMENT_CHARACTER))
        .collect();
    storable_text(&text, max_bytes)
}

/// Whether `content_type` can be stored: at most
/// [`CONTENT_TYPE_MAX_BYTES`] bytes of printable ASCII (space included).
pub fn content_type_storable(content_type: &str) -> bool {
    content_type.len() <= CONTENT_TYPE_MAX_BYTES
        && content_type.bytes().all(|b| (0x20..=0x7e).contains(&b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn truncation_is_at_a_boundary_and_within_the_limit() {
        for len in [1020, 1023, 1024, 1025, 5000] {
            for fill in ["x", "é", "€", "😀"] {
                let text = fill.repeat(len / fill.len() + 1);
                let cut = truncate_error(&text, RECORD_ERROR_MAX_BYTES);
                assert!(cut.len() <= RECORD_ERROR_MAX_BYTES, "{fill} {len}");
                if text.len() > RECORD_ERROR_MAX_BYTES {
                    assert!(cut.ends_with(TRUNCATION_MARKER));
                    assert!(cut.len() > RECORD_ERROR_MAX_BYTES - 4 - TRUNCATION_MARKER.len());
                } else {
                    assert_eq!(cut, text);
                }
            }
        }
    }

    #[test]
    fn content_types() {
        assert!(content_type_storable("application/json; charset=utf-8"));
        assert!(content_type_storable(&"a".repeat(255)));
        assert!(!content_type_storable(&"a".repeat(256)));
        assert!(!content_type_storable("text/plain\r\nx: y"));
        assert!(!content_type_storable("text/é"));
    }
}
