//! The core's registry of error codes, for hosts to derive or check their
//! typed errors against.

use mintid::error_codes::ERROR_CODES;

use crate::record::Problem;

/// One entry of the core's error-code registry.
#[derive(uniffi::Record)]
pub struct ErrorCodeInfo {
    /// The stable dotted code, e.g. `request_id.bad_tag`.
    pub code: String,
    /// The part before the dot, e.g. `request_id`.
    pub concern: String,
    /// The HTTP problem a request failing this way answers with, if the code
    /// is the client's fault.
    pub problem: Option<Problem>,
    /// Whether a host can meet this code (the `base64url.*` codes stay in Rust).
    pub host: bool,
    /// What the code means, in one sentence.
    pub summary: String,
    /// The message of an error of this code, a named field in braces for
    /// each value it fills in, e.g. `unknown key id {key_id}`.
    pub template: String,
}

/// Every code of the core's registry, sorted by code.
#[uniffi::export]
pub fn error_codes() -> Vec<ErrorCodeInfo> {
    ERROR_CODES
        .iter()
        .map(|entry| ErrorCodeInfo {
            code: entry.code.to_owned(),
            concern: entry.concern().to_owned(),
            problem: entry.problem.map(Problem::from),
            host: entry.host,
            summary: entry.summary.to_owned(),
            template: entry.template.to_owned(),
        })
        .collect()
}
