//! The one error type of the command: a stable code, a one-line message and
//! an exit status.

use std::fmt;

/// Exit status for invalid input and failed verifications.
pub const EXIT_INVALID: u8 = 1;
/// Exit status for usage errors (unknown options, malformed arguments).
pub const EXIT_USAGE: u8 = 2;

/// A failure reported as `mintid: <code>: <message>` on stderr.
#[derive(Debug)]
pub struct CliError {
    code: &'static str,
    message: String,
    exit: u8,
}

/// Exit status when a reader closed the output early: the command stops
/// quietly, as `mintid uuid7 -n 100000 | head -1` expects.
const EXIT_OUTPUT_CLOSED: u8 = 0;

impl CliError {
    /// A usage error (exit status 2), code `usage`.
    pub fn usage(message: impl Into<String>) -> Self {
        Self {
            code: "usage",
            message: message.into(),
            exit: EXIT_USAGE,
        }
    }

    /// Invalid input or a failed check (exit status 1).
    pub fn invalid(code: &'static str, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
            exit: EXIT_INVALID,
        }
    }

    /// The reader of stdout went away (a broken pipe): stop, say nothing.
    pub fn output_closed() -> Self {
        Self {
            code: "output.closed",
            message: String::new(),
            exit: EXIT_OUTPUT_CLOSED,
        }
    }

    /// Whether the error is reported on stderr (all but a closed output).
    pub fn is_reported(&self) -> bool {
        self.exit != EXIT_OUTPUT_CLOSED
    }

    /// The exit status.
    pub fn exit(&self) -> u8 {
        self.exit
    }
}

impl fmt::Display for CliError {
    /// One line: the code, then the message with any line breaks folded.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: ", self.code)?;
        let mut words = self.message.split_whitespace();
        if let Some(first) = words.next() {
            f.write_str(first)?;
        }
        for word in words {
            write!(f, " {word}")?;
        }
        Ok(())
    }
}

/// Every core error type reports its stable code and a one-line message.
macro_rules! from_core_error {
    ($($error:ty),* $(,)?) => {$(
        impl From<$error> for CliError {
            fn from(error: $error) -> Self {
                Self::invalid(error.code(), error.to_string())
            }
        }
    )*};
}

from_core_error!(
    mintid::SnowflakeError,
    mintid::Uuid7Error,
    mintid::KeyError,
    mintid::FingerprintError,
    mintid::UuidParseError,
    mintid::RequestIdError,
);
