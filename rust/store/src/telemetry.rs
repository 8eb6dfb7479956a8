//! What the store reports besides its results: the log lines of
//! `docs/spec.md` (a failure that could not be recorded), through `tracing`.

use mintid::store::DriverError;

/// Logs the store error that kept an operation's failure from being
/// recorded (`docs/spec.md`, "Which error the caller sees"): the caller gets
/// the operation's own error, the operator this line.
pub(crate) fn not_recorded(store_error: &DriverError) {
    tracing::warn!(
        code = store_error.code(),
        "an operation's failure was not recorded: {store_error}"
    );
}
