//! The Redis fast path (`mintid::store::FastPath`) for the uniffi hosts: the
//! script to run with its keys and arguments, and what Redis's answer means.
//! The host runs the named script (`EVALSHA`, loading it again on
//! `NOSCRIPT`) and pushes back what Redis said; every decision is the core's.

use std::sync::Arc;

use mintid::key::IdempotencyKey;
use mintid::store as core;

use crate::error::MintidError;
use crate::record::{CheckedRecordPolicy, Outcome, fingerprint};
use crate::store::{Held, StoredResponse};

/// One script to run: its name (`check`, `settle`, `forget`), its keys
/// (the record's entry) and its arguments.
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Record)]
pub struct RedisCall {
    /// The script's name in [`fast_path_scripts`].
    pub script: String,
    /// Its keys.
    pub keys: Vec<String>,
    /// Its arguments, as bytes.
    pub args: Vec<Vec<u8>>,
}

impl From<core::RedisCall> for RedisCall {
    fn from(call: core::RedisCall) -> Self {
        Self {
            script: call.script.into(),
            keys: call.keys,
            args: call.args,
        }
    }
}

/// A script of the fast path: its name and its Lua text.
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Record)]
pub struct RedisScript {
    /// The name a [`RedisCall`] gives.
    pub name: String,
    /// The Lua text (`schema/redis/<name>.lua`).
    pub text: String,
}

/// The fast path's scripts, for a host to load (`SCRIPT LOAD` or its
/// client's script object).
#[uniffi::export]
pub fn fast_path_scripts() -> Vec<RedisScript> {
    core::SCRIPTS
        .iter()
        .map(|(name, text)| RedisScript {
            name: (*name).into(),
            text: (*text).into(),
        })
        .collect()
}

/// What Redis said to a `check`.
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Enum)]
pub enum FastAnswer {
    /// A nil reply.
    Nil,
    /// An array reply: each element's bytes (an integer as decimal text),
    /// or none for a nil element.
    Fields {
        /// The elements.
        fields: Vec<Option<Vec<u8>>>,
    },
    /// Redis failed (an error reply, a lost connection, a timeout, a reply
    /// of another shape).
    Failed {
        /// The client's message, for the host's log.
        message: String,
    },
}

impl From<FastAnswer> for core::FastAnswer {
    fn from(answer: FastAnswer) -> Self {
        match answer {
            FastAnswer::Nil => Self::Nil,
            FastAnswer::Fields { fields } => Self::Fields(fields),
            FastAnswer::Failed { message } => Self::Failed(message),
        }
    }
}

/// What a request does after the `check`.
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Enum)]
pub enum FastVerdict {
    /// A hit: replay this without the database.
    Replay {
        /// Which result was stored.
        outcome: Outcome,
        /// The stored response.
        response: Option<StoredResponse>,
        /// For a failure, the stored error text.
        error: Option<String>,
    },
    /// A hit: a duplicate is in flight.
    InProgress {
        /// The suggested retry delay (ms).
        retry_after_millis: u64,
    },
    /// A miss: go to the database.
    Miss,
    /// Redis failed: go to the database.
    Fallback,
}

impl From<core::FastVerdict> for FastVerdict {
    fn from(verdict: core::FastVerdict) -> Self {
        match verdict {
            core::FastVerdict::Answer(core::Finished::Replay {
                outcome,
                response,
                error,
            }) => Self::Replay {
                outcome: outcome.into(),
                response: response.map(Into::into),
                error,
            },
            core::FastVerdict::Answer(core::Finished::InProgress { retry_after_millis }) => {
                Self::InProgress { retry_after_millis }
            }
            core::FastVerdict::Miss => Self::Miss,
            // The core answers only with a replay or in progress.
            core::FastVerdict::Answer(_) | core::FastVerdict::Fallback => Self::Fallback,
        }
    }
}

/// What the database path of a request came to.
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Enum)]
pub enum Settled {
    /// The operation ran under `held` and its response is committed.
    Executed {
        /// The claim it ran under.
        held: Held,
        /// The response stored.
        response: StoredResponse,
    },
    /// The operation ran under `held` and its final failure is committed.
    FailedStored {
        /// The claim it ran under.
        held: Held,
        /// The failure's error text.
        message: String,
        /// Its optional response.
        response: Option<StoredResponse>,
    },
    /// Anything else; `held` when the request held a claim.
    Other {
        /// The claim it held, if any.
        held: Option<Held>,
    },
}

impl From<Settled> for core::Settled {
    fn from(settled: Settled) -> Self {
        match settled {
            Settled::Executed { held, response } => Self::Executed {
                held: held.into(),
                response: response.into(),
            },
            Settled::FailedStored {
                held,
                message,
                response,
            } => Self::FailedStored {
                held: held.into(),
                message,
                response: response.map(Into::into),
            },
            Settled::Other { held } => Self::Other {
                held: held.map(Into::into),
            },
        }
    }
}

/// The fast path of one store (`docs/spec.md`, "The fast path").
#[derive(Debug, uniffi::Object)]
pub struct RecordFastPath(core::FastPath);

fn key(text: &str) -> Result<IdempotencyKey, MintidError> {
    Ok(IdempotencyKey::parse(text.as_bytes())?)
}

#[uniffi::export]
impl RecordFastPath {
    /// The fast path of a store under `policy`; entries live at most
    /// `ttl_millis` when given, and always end before the record's retention.
    #[uniffi::constructor]
    pub fn new(policy: Arc<CheckedRecordPolicy>, ttl_millis: Option<u64>) -> Arc<Self> {
        let fast = core::FastPath::new(policy.core());
        Arc::new(Self(match ttl_millis {
            Some(ttl) => fast.with_ttl_millis(ttl),
            None => fast,
        }))
    }

    /// The `check` to run before the database, or none (straight to the
    /// database). `key_text` is the key's canonical text.
    pub fn check(
        &self,
        key_text: String,
        digest: Vec<u8>,
        key_created_millis: Option<u64>,
        now_millis: u64,
    ) -> Result<Option<RedisCall>, MintidError> {
        let call = self.0.check(
            &key(&key_text)?,
            &fingerprint(&digest)?,
            key_created_millis,
            now_millis,
        );
        Ok(call.map(Into::into))
    }

    /// What the `check`'s answer means for a request with `digest`.
    pub fn read_check(
        &self,
        digest: Vec<u8>,
        answer: FastAnswer,
    ) -> Result<FastVerdict, MintidError> {
        Ok(self
            .0
            .read_check(&fingerprint(&digest)?, &answer.into())
            .into())
    }

    /// The script that follows the database path.
    pub fn settle(
        &self,
        key_text: String,
        digest: Vec<u8>,
        settled: Settled,
        now_millis: u64,
    ) -> Result<RedisCall, MintidError> {
        let call = self.0.settle(
            &key(&key_text)?,
            &fingerprint(&digest)?,
            &settled.into(),
            now_millis,
        );
        Ok(call.into())
    }

    /// The script to run after a claim is written, if any (a takeover).
    pub fn claimed(&self, key_text: String, held: Held) -> Result<Option<RedisCall>, MintidError> {
        Ok(self
            .0
            .claimed(&key(&key_text)?, &held.into())
            .map(Into::into))
    }
}
