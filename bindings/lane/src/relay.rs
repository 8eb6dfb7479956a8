//! The outbox relay on the lane: a run's sends and marks, packed.

use alloc::vec::Vec;

use mintid::store::{Answer, OutboxRelay, RelayStep, RelayYield};

use crate::lane::{Driven, Lane};
use crate::write::put_bytes;
use crate::{Refusal, tag};

impl Driven for OutboxRelay {
    type Yield = RelayYield;

    fn push(&mut self, answer: Answer, now_millis: u64) -> RelayStep {
        OutboxRelay::push(self, answer, now_millis)
    }

    fn resume(&mut self) -> RelayStep {
        OutboxRelay::resume(self)
    }

    /// `YIELD` (send): id `u64`, kind, business key, payload, attempts
    /// `u64`, created `u64`; `DONE`: the report's seven counts (`mark_failed`
    /// last), `u64` each.
    fn put_yield(out: &mut Vec<u8>, yielded: RelayYield) {
        match yielded {
            RelayYield::Send(message) => {
                out.push(tag::YIELD);
                out.extend_from_slice(&message.message_id.to_le_bytes());
                put_bytes(out, message.kind.as_bytes());
                put_bytes(out, message.business_key.as_bytes());
                put_bytes(out, &message.payload);
                out.extend_from_slice(&message.attempts.to_le_bytes());
                out.extend_from_slice(&message.created_millis.to_le_bytes());
            }
            RelayYield::Done(report) => {
                out.push(tag::DONE);
                for count in [
                    report.sent,
                    report.retried,
                    report.dead,
                    report.given_up,
                    report.claim_lost,
                    report.released,
                    report.mark_failed,
                ] {
                    out.extend_from_slice(&count.to_le_bytes());
                }
            }
        }
    }
}

impl<E: Refusal> Lane<OutboxRelay, E> {
    /// The message of the last send was sent, at `now_millis`.
    pub fn sent(&mut self, now_millis: u64) -> &[u8] {
        self.drive(|relay| relay.sent(now_millis))
    }

    /// The last send failed with `error`, at `now_millis`.
    pub fn failed(&mut self, error: &str, now_millis: u64) -> &[u8] {
        self.drive(|relay| relay.failed(error, now_millis))
    }
}
