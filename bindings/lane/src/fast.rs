//! The Redis fast path on the lane: the record driver's Redis step,
//! Redis's answer and the fast path's report, packed (`docs/spec.md`,
//! "The lane").

use alloc::string::String;
use alloc::vec::Vec;

use mintid::store::{DriverError, FastAnswer, FastReport, RedisCall};

use crate::read::{Reader, malformed};
use crate::write::put_bytes;

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

#[cfg(test)]
mod tests {
    use alloc::vec;

    use mintid::fingerprint::Fingerprint;
    use mintid::key::IdempotencyKey;
    use mintid::record::{Incoming, RecordPolicy};
    use mintid::store::{
        CHECK, Dialect, FastPath, Manifest, Placeholder, RecordDriver, RecordYield, Step, Way,
    };

    use super::*;

    #[test]
    fn a_redis_call_packs_its_command_script_keys_and_args() {
        let key = IdempotencyKey::new("order", "shop", "k-1").unwrap();
        let policy = RecordPolicy::new(60_000, 86_400_000).unwrap();
        let mut driver = RecordDriver::with_fast_path(
            Manifest::new(Dialect::Sqlite, Placeholder::Question),
            policy,
            Way::RunOnce,
            &key,
            Incoming::new(Fingerprint::from_digest([7; 32])),
            FastPath::new(policy),
        );
        let Step::Yield(RecordYield::Redis(call)) = driver.start(1) else {
            panic!("no check first");
        };
        let mut out = Vec::new();
        put_redis_call(&mut out, &call);
        let mut expected = vec![0, 5];
        expected.extend_from_slice(b"check");
        expected.extend_from_slice(&40u32.to_le_bytes());
        expected.extend_from_slice(CHECK.sha1.as_bytes());
        expected.push(1);
        expected.extend_from_slice(&23u32.to_le_bytes());
        expected.extend_from_slice(b"mintid:{order:shop:k-1}\x02");
        expected.extend_from_slice(&32u32.to_le_bytes());
        expected.extend_from_slice(&[7; 32]);
        expected.extend_from_slice(&5u32.to_le_bytes());
        expected.extend_from_slice(b"60000");
        assert_eq!(out, expected);
    }

    #[test]
    fn answers_unpack_and_reports_pack() {
        let mut packed = vec![1];
        packed.extend_from_slice(&2u32.to_le_bytes());
        packed.extend_from_slice(&[1, 2, 0, 0, 0, b'o', b'k', 0]);
        assert_eq!(
            unpack_answer(&packed).unwrap(),
            FastAnswer::Fields(vec![Some(b"ok".to_vec()), None])
        );
        assert_eq!(unpack_answer(&[0]).unwrap(), FastAnswer::Nil);
        assert_eq!(unpack_answer(&[3]).unwrap(), FastAnswer::NoScript);
        assert!(unpack_answer(&[1, 9]).is_err());
        assert!(unpack_answer(&[0, 0]).is_err());
        assert!(unpack_answer(&[4]).is_err());
        let mut out = Vec::new();
        let report = FastReport {
            lookup: Some("fallback"),
            write_failures: 2,
        };
        pack_report(&mut out, report);
        assert_eq!(
            out,
            [
                8, b'f', b'a', b'l', b'l', b'b', b'a', b'c', b'k', 2, 0, 0, 0
            ]
        );
        pack_report(&mut out, FastReport::default());
        assert_eq!(out, [0, 0, 0, 0, 0]);
    }
}
