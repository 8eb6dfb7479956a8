//! A covered request whose body something else read first (issue 25, item 6).
//!
//! A body parser mounted before the idempotency middleware (Express's
//! `express.json()`, Spring's `FormContentFilter`, a Ktor plugin that
//! `receive`s without `DoubleReceive`) leaves the middleware an ended
//! stream. Fingerprinted as empty, every body under one key would look the
//! same and a different body would be answered with the first one's stored
//! response instead of 422. The rule: such a request is refused, never
//! fingerprinted as empty.

use super::HttpError;

/// What the middleware saw of a covered request's body when it read it: the
/// framework's facts, pushed to [`check_body_read`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BodyRead {
    /// The request's `Content-Length`, if it has one.
    pub declared_length: Option<u64>,
    /// Whether the request declares a transfer coding (`Transfer-Encoding`,
    /// a chunked body of unknown length).
    pub transfer_coded: bool,
    /// Whether the framework says the body stream had ended, or had been
    /// taken by another reader, before the middleware read a byte.
    pub ended_before_read: bool,
    /// How many bytes the middleware read (at most its body limit).
    pub read: u64,
}

/// Whether the body the middleware read is the request's: `Ok` unless the
/// request declares a body (a `Content-Length` above 0, or a transfer coding)
/// and the stream had ended before the middleware read it, or gave fewer
/// bytes than its `Content-Length`. A host calls it with what it read before
/// fingerprinting; `fix` names the remedy in the framework's words (mount the
/// middleware before the parser, or hand it the bytes the parser kept).
///
/// # Errors
/// `http.body_consumed`: the server's configuration (no problem document);
/// the host raises it as an error, never answers the client with a replay.
pub fn check_body_read(read: BodyRead, fix: &str) -> Result<(), HttpError> {
    let declared = read.declared_length.is_some_and(|length| length > 0) || read.transfer_coded;
    let short = read
        .declared_length
        .is_some_and(|length| read.read < length);
    if declared && (read.ended_before_read || short) {
        return Err(HttpError::body_consumed(
            read.declared_length.filter(|_| !read.transfer_coded),
            read.read,
            fix,
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;

    fn read(
        declared_length: Option<u64>,
        transfer_coded: bool,
        ended: bool,
        read: u64,
    ) -> BodyRead {
        BodyRead {
            declared_length,
            transfer_coded,
            ended_before_read: ended,
            read,
        }
    }

    #[test]
    fn a_declared_body_that_is_gone_is_refused() {
        let error = check_body_read(read(Some(14), false, true, 0), "mount it first").unwrap_err();
        assert_eq!(error.code(), "http.body_consumed");
        assert_eq!(error.problem(), None);
        let message = error.to_string();
        assert!(
            message.starts_with("the request declares a body (14 bytes)"),
            "{message}"
        );
        assert!(message.ends_with("; mount it first"), "{message}");
        // Fewer bytes than declared, even if the framework could not tell.
        assert!(check_body_read(read(Some(14), false, false, 3), "").is_err());
        // A chunked body whose stream had ended before the middleware.
        let chunked = check_body_read(read(None, true, true, 0), "").unwrap_err();
        assert!(chunked.to_string().contains("(a transfer coding)"));
    }

    #[test]
    fn a_body_read_whole_or_none_declared_passes() {
        assert_eq!(
            check_body_read(read(Some(14), false, false, 14), ""),
            Ok(())
        );
        assert_eq!(check_body_read(read(None, true, false, 0), ""), Ok(()));
        // No body declared: an ended stream is simply empty.
        assert_eq!(check_body_read(read(None, false, true, 0), ""), Ok(()));
        assert_eq!(check_body_read(read(Some(0), false, true, 0), ""), Ok(()));
    }
}
