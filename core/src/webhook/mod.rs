//! Webhooks (payment callbacks and other provider notifications): the
//! rules an HTTP integration applies before anything runs.
//!
//! * [`key_from_body`]: the idempotency key's id read from the JSON body by
//!   a JSON Pointer (RFC 6901, `~0` for `~` and `~1` for `/` in a token), as
//!   a callback carries its transaction id in its body, not in a header.
//! * [`verify_signature`]: the provider's HMAC-SHA256 signature of the raw
//!   body, compared in constant time, in one of the [`SignatureScheme`]s
//!   (GitHub's `sha256=<hex>`, Stripe's `t=<ts>,v1=<hex>` with a timestamp
//!   tolerance).
//!
//! The rules are in `docs/spec.md`, "Webhooks".

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;

use hmac::{KeyInit, Mac};
use subtle::ConstantTimeEq;

use crate::fingerprint::JsonPointer;
use crate::fingerprint::jcs::write_value;
use crate::fingerprint::json::{self, Value};
use crate::quote::QuotedStr;

type HmacSha256 = hmac::Hmac<sha2::Sha256>;

/// The longest key id read from a body, in bytes.
pub const MAX_BODY_KEY_BYTES: usize = 255;

/// The id at `pointer` in the JSON `body`: a string as it is, a number in
/// its shortest ECMAScript form (`12`, `12.5`, `1e+21`).
///
/// Fails with `webhook.invalid_pointer` (the pointer's syntax),
/// `webhook.invalid_body` (not JSON), `webhook.key_missing` (nothing there,
/// or an empty string) or `webhook.key_not_scalar` (an object, array,
/// boolean or null), and `webhook.key_too_long` (above 255 bytes).
pub fn key_from_body(body: &[u8], pointer: &str) -> Result<String, WebhookError> {
    let parsed = JsonPointer::parse(pointer).map_err(|error| {
        WebhookError::new(
            WebhookErrorKind::InvalidPointer,
            format!("invalid key pointer: {error}"),
        )
    })?;
    let document = json::parse(body).map_err(|error| {
        WebhookError::new(
            WebhookErrorKind::InvalidBody,
            format!("the webhook body is not JSON: {error}"),
        )
    })?;
    let missing = || {
        WebhookError::new(
            WebhookErrorKind::KeyMissing,
            format!("the webhook body has no key at {}", QuotedStr(pointer)),
        )
    };
    let key = match parsed.resolve(&document) {
        None => return Err(missing()),
        Some(Value::String(text)) if text.is_empty() => return Err(missing()),
        Some(Value::String(text)) => String::from(text.as_ref()),
        Some(number @ Value::Number(_)) => {
            let mut text = String::new();
            write_value(number, &mut text);
            text
        }
        Some(other) => {
            let found = match other {
                Value::Null => "null",
                Value::Bool(_) => "a boolean",
                Value::Array(_) => "an array",
                _ => "an object",
            };
            return Err(WebhookError::new(
                WebhookErrorKind::KeyNotScalar,
                format!(
                    "the webhook key at {} must be a string or a number, found {found}",
                    QuotedStr(pointer)
                ),
            ));
        }
    };
    if key.len() > MAX_BODY_KEY_BYTES {
        return Err(WebhookError::new(
            WebhookErrorKind::KeyTooLong,
            format!(
                "the webhook key at {} is {} bytes, more than 255",
                QuotedStr(pointer),
                key.len()
            ),
        ));
    }
    Ok(key)
}

/// How a provider sends its signature of the raw body.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SignatureScheme {
    /// GitHub's `X-Hub-Signature-256: sha256=<hex>`: HMAC-SHA256 of the body,
    /// 64 hex digits (either case).
    Sha256Prefixed,
    /// Stripe's `Stripe-Signature: t=<unix seconds>,v1=<hex>[,v1=<hex>…]`:
    /// HMAC-SHA256 of `<t>.<body>`; any `v1` may match (a secret being
    /// rolled), other schemes' entries are ignored, and `t` must be within
    /// `tolerance_millis` of now, either way.
    Timestamped {
        /// How far `t` may be from now, in milliseconds (Stripe's default:
        /// 300 000).
        tolerance_millis: u64,
    },
}

/// Checks `header` (the provider's signature header, as received) against
/// the HMAC-SHA256 of `body` under `secret`, in constant time, at
/// `now_millis` (Unix milliseconds).
///
/// Fails with `webhook.invalid_secret` (an empty secret),
/// `webhook.signature_missing` (an empty header),
/// `webhook.signature_malformed` (not the scheme's form),
/// `webhook.signature_expired` (a timestamp outside the tolerance) or
/// `webhook.signature_mismatch`.
pub fn verify_signature(
    scheme: SignatureScheme,
    secret: &[u8],
    header: &str,
    body: &[u8],
    now_millis: u64,
) -> Result<(), WebhookError> {
    let mac = mac(secret)?;
    let header = header.trim();
    if header.is_empty() {
        return Err(WebhookError::new(
            WebhookErrorKind::SignatureMissing,
            "the webhook has no signature".into(),
        ));
    }
    let malformed = |form: &str| {
        WebhookError::new(
            WebhookErrorKind::SignatureMalformed,
            format!("the webhook signature is not of the form {form}"),
        )
    };
    let (signed, candidates) = match scheme {
        SignatureScheme::Sha256Prefixed => {
            let form = "sha256=<64 hex digits>";
            let hex = header
                .strip_prefix("sha256=")
                .ok_or_else(|| malformed(form))?;
            let digest = decode_hex(hex).ok_or_else(|| malformed(form))?;
            (
                mac.chain_update(body),
                [digest].into_iter().collect::<Vec<_>>(),
            )
        }
        SignatureScheme::Timestamped { tolerance_millis } => {
            let form = "t=<unix seconds>,v1=<64 hex digits>";
            let mut timestamp = None;
            let mut digests = Vec::new();
            for item in header.split(',') {
                let (name, value) = item.trim().split_once('=').ok_or_else(|| malformed(form))?;
                match name {
                    "t" if timestamp.is_none() => {
                        let seconds = (!value.is_empty()
                            && value.bytes().all(|b| b.is_ascii_digit()))
                        .then(|| value.parse::<u64>().ok())
                        .flatten()
                        .ok_or_else(|| malformed(form))?;
                        timestamp = Some((value, seconds));
                    }
                    "t" => return Err(malformed(form)),
                    "v1" => digests.push(decode_hex(value).ok_or_else(|| malformed(form))?),
                    _ => {}
                }
            }
            let (Some((text, seconds)), false) = (timestamp, digests.is_empty()) else {
                return Err(malformed(form));
            };
            let sent_millis = seconds.saturating_mul(1000);
            if sent_millis.abs_diff(now_millis) > tolerance_millis {
                return Err(WebhookError::new(
                    WebhookErrorKind::SignatureExpired,
                    format!(
                        "the webhook signature's timestamp {seconds} s is more than \
                         {tolerance_millis} ms from now ({now_millis} ms)"
                    ),
                ));
            }
            let mac = mac
                .chain_update(text.as_bytes())
                .chain_update(b".")
                .chain_update(body);
            (mac, digests)
        }
    };
    let expected = signed.finalize().into_bytes();
    let mut matched = subtle::Choice::from(0);
    for candidate in &candidates {
        matched |= expected.as_slice().ct_eq(candidate.as_slice());
    }
    if bool::from(matched) {
        Ok(())
    } else {
        Err(WebhookError::new(
            WebhookErrorKind::SignatureMismatch,
            "the webhook signature does not match the body".into(),
        ))
    }
}

/// The header a provider would send for `body` under `secret`: for tests
/// and for a service that sends webhooks itself. `timestamp_seconds` is
/// read by [`SignatureScheme::Timestamped`] only.
///
/// Fails with `webhook.invalid_secret` for an empty secret.
pub fn signature_header(
    scheme: SignatureScheme,
    secret: &[u8],
    body: &[u8],
    timestamp_seconds: u64,
) -> Result<String, WebhookError> {
    let mac = mac(secret)?;
    Ok(match scheme {
        SignatureScheme::Sha256Prefixed => {
            format!(
                "sha256={}",
                encode_hex(&mac.chain_update(body).finalize().into_bytes())
            )
        }
        SignatureScheme::Timestamped { .. } => {
            let text = format!("{timestamp_seconds}");
            let digest = mac
                .chain_update(text.as_bytes())
                .chain_update(b".")
                .chain_update(body)
                .finalize()
                .into_bytes();
            format!("t={text},v1={}", encode_hex(&digest))
        }
    })
}

fn mac(secret: &[u8]) -> Result<HmacSha256, WebhookError> {
    let invalid = || {
        WebhookError::new(
            WebhookErrorKind::InvalidSecret,
            "the webhook secret must not be empty".into(),
        )
    };
    if secret.is_empty() {
        return Err(invalid());
    }
    HmacSha256::new_from_slice(secret).map_err(|_| invalid())
}

fn decode_hex(text: &str) -> Option<Vec<u8>> {
    if text.len() != 64 {
        return None;
    }
    let digit = |b: u8| match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    };
    text.as_bytes()
        .chunks(2)
        .map(|pair| Some(digit(pair[0])? << 4 | digit(pair[1])?))
        .collect()
}

fn encode_hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    bytes
        .iter()
        .flat_map(|b| [DIGITS[usize::from(b >> 4)], DIGITS[usize::from(b & 15)]])
        .map(char::from)
        .collect()
}

/// Why a webhook rule refused. See [`kind`](WebhookError::kind) and
/// [`code`](WebhookError::code).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebhookError {
    kind: WebhookErrorKind,
    message: String,
}

/// The kinds of [`WebhookError`], each with a stable [`code`](WebhookErrorKind::code).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum WebhookErrorKind {
    /// `webhook.invalid_pointer`: the key's JSON Pointer is not valid.
    InvalidPointer,
    /// `webhook.invalid_body`: the body is not JSON.
    InvalidBody,
    /// `webhook.key_missing`: nothing (or an empty string) at the pointer.
    KeyMissing,
    /// `webhook.key_not_scalar`: an object, array, boolean or null at the pointer.
    KeyNotScalar,
    /// `webhook.key_too_long`: a key above 255 bytes.
    KeyTooLong,
    /// `webhook.invalid_secret`: an empty secret.
    InvalidSecret,
    /// `webhook.signature_missing`: no signature header.
    SignatureMissing,
    /// `webhook.signature_malformed`: a header not in the scheme's form.
    SignatureMalformed,
    /// `webhook.signature_expired`: a timestamp outside the tolerance.
    SignatureExpired,
    /// `webhook.signature_mismatch`: no signature matches the body.
    SignatureMismatch,
}

impl WebhookErrorKind {
    /// The stable dotted code of this kind.
    pub const fn code(self) -> &'static str {
        match self {
            Self::InvalidPointer => "webhook.invalid_pointer",
            Self::InvalidBody => "webhook.invalid_body",
            Self::KeyMissing => "webhook.key_missing",
            Self::KeyNotScalar => "webhook.key_not_scalar",
            Self::KeyTooLong => "webhook.key_too_long",
            Self::InvalidSecret => "webhook.invalid_secret",
            Self::SignatureMissing => "webhook.signature_missing",
            Self::SignatureMalformed => "webhook.signature_malformed",
            Self::SignatureExpired => "webhook.signature_expired",
            Self::SignatureMismatch => "webhook.signature_mismatch",
        }
    }
}

impl WebhookError {
    fn new(kind: WebhookErrorKind, message: String) -> Self {
        Self { kind, message }
    }

    /// What went wrong.
    pub const fn kind(&self) -> WebhookErrorKind {
        self.kind
    }

    /// The stable dotted code, e.g. `"webhook.signature_mismatch"`.
    pub const fn code(&self) -> &'static str {
        self.kind.code()
    }
}

impl fmt::Display for WebhookError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl core::error::Error for WebhookError {}
