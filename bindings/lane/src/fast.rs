//! The Redis fast path on the lane: a script call, Redis's answer, the
//! verdict and what the database path came to, packed (`docs/spec.md`,
//! "The lane").

use alloc::string::String;
use alloc::vec::Vec;

use mintid::store::{
    DriverError, FastAnswer, FastReport, FastVerdict, Finished, Held, RedisCall, Settled,
};

use crate::read::{Reader, malformed};
use crate::record::put_finished;
use crate::write::put_bytes;

/// The tag of a packed call: none (go on without Redis) or a script to run.
mod call {
    pub const NONE: u8 = 0;
    pub const SCRIPT: u8 = 1;
}

/// The tag of a packed verdict; a replay and in progress are packed as a
/// record's end is (tags 2 and 3).
mod verdict {
    pub const MISS: u8 = 0;
    pub const FALLBACK: u8 = 1;
    #[cfg(test)]
    pub const REPLAY: u8 = 2;
    #[cfg(test)]
    pub const IN_PROGRESS: u8 = 3;
}

/// Packs `call` into `out` (cleared first): `0` none, or `1`, the script's
/// name (`u8` length), the keys and the arguments (a `u8` count, then each
/// as `u32` length and bytes).
pub fn pack_call(out: &mut Vec<u8>, call: Option<&RedisCall>) {
    out.clear();
    let Some(call) = call else {
        out.push(call::NONE);
        return;
    };
    out.push(call::SCRIPT);
    out.push(u8::try_from(call.script.len()).unwrap_or(u8::MAX));
    out.extend_from_slice(call.script.as_bytes());
    out.push(u8::try_from(call.keys.len()).unwrap_or(u8::MAX));
    for key in &call.keys {
        put_bytes(out, key.as_bytes());
    }
    out.push(u8::try_from(call.args.len()).unwrap_or(u8::MAX));
    for arg in &call.args {
        put_bytes(out, arg);
    }
}

/// Appends the record driver's Redis step (after [`crate::tag::REDIS`]):
/// `1` for `EVAL` with the source or `0` for `EVALSHA` with the SHA-1, the
/// script's name (`u8` length), that source or SHA-1 (`u32` length), then
/// the keys and the arguments (a `u8` count, then each as `u32` length and
/// bytes).
pub fn put_redis_call(out: &mut Vec<u8>, call: &RedisCall) {
    out.push(u8::from(call.eval));
    out.push(u8::try_from(call.script.len()).unwrap_or(u8::MAX));
    out.extend_from_slice(call.script.as_bytes());
    put_bytes(
        out,
        if call.eval { call.source } else { call.sha1 }.as_bytes(),
    );
    put_list(out, call.keys.iter().map(String::as_bytes), call.keys.len());
    put_list(out, call.args.iter().map(Vec::as_slice), call.args.len());
}

fn put_list<'a>(out: &mut Vec<u8>, items: impl Iterator<Item = &'a [u8]>, count: usize) {
    out.push(u8::try_from(count).unwrap_or(u8::MAX));
    for item in items {
        put_bytes(out, item);
    }
}

/// Packs a [`FastReport`] into `out` (cleared first): the lookup's verdict
/// (`u8` length, then its name: `hit`, `miss` or `fallback`; length 0 for
/// none) and the failed writes (`u32`).
pub fn pack_report(out: &mut Vec<u8>, report: FastReport) {
    out.clear();
    let lookup = report.lookup.unwrap_or("");
    out.push(u8::try_from(lookup.len()).unwrap_or(u8::MAX));
    out.extend_from_slice(lookup.as_bytes());
    out.extend_from_slice(&report.write_failures.to_le_bytes());
}

/// Reads a packed answer: `0` nil, `1` fields (`u32` count, each a present
/// `u8` and its bytes; an integer reply is one field, its decimal text),
/// `2` failed (the client's message), `3` `NOSCRIPT` (the node does not
/// have the script).
pub fn unpack_answer(packed: &[u8]) -> Result<FastAnswer, DriverError> {
    let mut reader = Reader(packed);
    let answer = match reader.u8()? {
        0 => FastAnswer::Nil,
        1 => {
            let count = reader.u32()?;
            let mut fields = Vec::with_capacity(count.min(16) as usize);
            for _ in 0..count {
                fields.push(match reader.u8()? {
                    0 => None,
                    _ => Some(reader.bytes()?),
                });
            }
            FastAnswer::Fields(fields)
        }
        2 => FastAnswer::Failed(reader.text()?),
        3 => FastAnswer::NoScript,
        _ => return Err(malformed("redis answer")),
    };
    reader.end(answer)
}

/// Packs `verdict` into `out` (cleared first): `0` miss, `1` fallback, `2`
/// replay (outcome `u8`: 0 succeeded, 1 failed; response present `u8`
/// \[content type, body\]; error present `u8` \[text\]), `3` in progress
/// (retry_after_millis `u64`).
pub fn pack_verdict(out: &mut Vec<u8>, verdict: &FastVerdict) {
    out.clear();
    match verdict {
        FastVerdict::Miss => out.push(verdict::MISS),
        FastVerdict::Answer(finished @ (Finished::Replay { .. } | Finished::InProgress { .. })) => {
            put_finished(out, finished.clone());
        }
        // The core answers only with a replay or in progress.
        FastVerdict::Fallback | FastVerdict::Answer(_) => out.push(verdict::FALLBACK),
    }
}

/// Reads what the database path came to: `0` executed (the held claim,
/// content type, body), `1` failed and stored (the held claim, message,
/// response present `u8` \[content type, body\]), `2` other (held present
/// `u8` \[the held claim\]). A held claim is token, created_millis,
/// lease_deadline_millis (`u64` each).
pub fn unpack_settled(packed: &[u8]) -> Result<Settled, DriverError> {
    let mut reader = Reader(packed);
    let settled = match reader.u8()? {
        0 => Settled::Executed {
            held: held(&mut reader)?,
            response: reader.response()?,
        },
        1 => {
            let held = held(&mut reader)?;
            let message = reader.text()?;
            let response = match reader.u8()? {
                0 => None,
                _ => Some(reader.response()?),
            };
            Settled::FailedStored {
                held,
                message,
                response,
            }
        }
        2 => Settled::Other {
            held: match reader.u8()? {
                0 => None,
                _ => Some(held(&mut reader)?),
            },
        },
        _ => return Err(malformed("settled")),
    };
    reader.end(settled)
}

fn held(reader: &mut Reader<'_>) -> Result<Held, DriverError> {
    let word = |reader: &mut Reader<'_>| {
        let mut bytes = [0; 8];
        bytes.copy_from_slice(reader.take(8)?);
        Ok::<u64, DriverError>(u64::from_le_bytes(bytes))
    };
    Ok(Held {
        token: word(reader)?,
        created_millis: word(reader)?,
        lease_deadline_millis: word(reader)?,
        renew_every_millis: None,
    })
}

#[cfg(test)]
mod tests {
    use alloc::string::String;
    use alloc::vec;

    use mintid::fingerprint::Fingerprint;
    use mintid::key::IdempotencyKey;
    use mintid::record::{Outcome, RecordPolicy};
    use mintid::store::{FastPath, StoredResponse};

    use super::*;

    fn fast() -> FastPath {
        FastPath::new(RecordPolicy::new(60_000, 86_400_000).unwrap())
    }

    #[test]
    fn a_check_packs_its_script_keys_and_args() {
        let key = IdempotencyKey::new("order", "shop", "k-1").unwrap();
        let call = fast().check(&key, &Fingerprint::from_digest([7; 32]), None, 1);
        let mut out = Vec::new();
        pack_call(&mut out, call.as_ref());
        let mut expected = vec![call::SCRIPT, 5];
        expected.extend_from_slice(b"check\x01");
        expected.extend_from_slice(&23u32.to_le_bytes());
        expected.extend_from_slice(b"mintid:{order:shop:k-1}\x02");
        expected.extend_from_slice(&32u32.to_le_bytes());
        expected.extend_from_slice(&[7; 32]);
        expected.extend_from_slice(&5u32.to_le_bytes());
        expected.extend_from_slice(b"60000");
        assert_eq!(out, expected);
        pack_call(&mut out, None);
        assert_eq!(out, [call::NONE]);
    }

    #[test]
    fn answers_unpack_and_verdicts_pack() {
        let mut packed = vec![1];
        packed.extend_from_slice(&2u32.to_le_bytes());
        packed.extend_from_slice(&[1, 2, 0, 0, 0, b'o', b'k', 0]);
        assert_eq!(
            unpack_answer(&packed).unwrap(),
            FastAnswer::Fields(vec![Some(b"ok".to_vec()), None])
        );
        assert_eq!(unpack_answer(&[0]).unwrap(), FastAnswer::Nil);
        assert!(unpack_answer(&[1, 9]).is_err());
        assert!(unpack_answer(&[0, 0]).is_err());
        let mut out = Vec::new();
        let replay = FastVerdict::Answer(Finished::Replay {
            outcome: Outcome::Failed,
            response: None,
            error: Some(String::from("no")),
        });
        pack_verdict(&mut out, &replay);
        assert_eq!(out, [verdict::REPLAY, 1, 0, 1, 2, 0, 0, 0, b'n', b'o']);
        let waiting = FastVerdict::Answer(Finished::InProgress {
            retry_after_millis: 9,
        });
        pack_verdict(&mut out, &waiting);
        assert_eq!(out, [verdict::IN_PROGRESS, 9, 0, 0, 0, 0, 0, 0, 0]);
        pack_verdict(&mut out, &FastVerdict::Fallback);
        assert_eq!(out, [verdict::FALLBACK]);
    }

    #[test]
    fn settled_results_unpack() {
        let mut packed = vec![0];
        for word in [2u64, 10, 70] {
            packed.extend_from_slice(&word.to_le_bytes());
        }
        packed.extend_from_slice(&1u32.to_le_bytes());
        packed.push(b't');
        packed.extend_from_slice(&0u32.to_le_bytes());
        let Settled::Executed { held, response } = unpack_settled(&packed).unwrap() else {
            panic!("not executed");
        };
        assert_eq!((held.token, held.created_millis), (2, 10));
        assert_eq!(
            response,
            StoredResponse {
                content_type: String::from("t"),
                body: Vec::new()
            }
        );
        assert_eq!(
            unpack_settled(&[2, 0]).unwrap(),
            Settled::Other { held: None }
        );
        assert!(unpack_settled(&[3]).is_err());
    }
}
