//! The lane: the layout the hosts read before the wire (`mintid_lane_*`,
//! the wasm `RecordLane`), kept until every host has moved to the wire and
//! then deleted. A [`LaneDriver`] is a [`Wire`] whose inputs are read from
//! the lane's layout and whose steps are rewritten into it; nothing else
//! about a driver is here.
//!
//! The lane differs from the wire in: a `u8` length before a query's or a
//! script's name and a `u8` count of parameters, columns, keys and
//! arguments; a record's execute without the decision's name and with
//! `renew_every_millis` as an `i64` (−1: none); a record's done without the
//! decision's name; a raised outcome as one text; the fast report as a
//! `u8`-length verdict name (0: none) and a `u32`.

use alloc::vec::Vec;

use mintid::store::{DbErrorClass, DriverError, FastReport, Value};

use crate::input::{Input, Outcome, class_of, read_outcome, read_redis_answer};
use crate::read::{Reader, malformed};
use crate::spec::Spec;
use crate::write::{put_bytes, put_u64};
use crate::{Refusal, Wire, tag};

/// The longest packed fast-path report on the lane: `fallback` and its count.
pub const FAST_REPORT_MAX: usize = 13;

/// A driver on the lane: a wire, and its last step in the lane's layout.
#[derive(Debug)]
pub struct LaneDriver<E> {
    wire: Wire<E>,
    record: bool,
    step: Vec<u8>,
}

impl<E: Refusal> LaneDriver<E> {
    /// The driver of `spec` (or of the refusal `made` carries).
    pub fn new(made: Result<Spec, E>) -> Self {
        let record = matches!(made, Ok(Spec::Record { .. }));
        let wire = match made {
            Ok(spec) => Wire::from_spec(spec),
            Err(error) => Wire::refused(&error),
        };
        let mut lane = Self {
            wire,
            record,
            step: Vec::with_capacity(128),
        };
        lane.rewrite();
        lane
    }

    /// Pushes one input at `now_millis`; the next step.
    pub fn push(&mut self, now_millis: u64, input: Input) -> &[u8] {
        self.wire.push(now_millis, input);
        self.rewrite()
    }

    /// Pushes rows in the lane's layout.
    pub fn push_rows(&mut self, rows: &[u8], now_millis: u64) -> &[u8] {
        match lane_rows(rows) {
            Ok(rows) => self.push(now_millis, Input::Rows(rows)),
            Err(error) => self.fail(&E::from(error)),
        }
    }

    /// Pushes a failed query: the executor's class and the driver's message.
    pub fn push_failed(&mut self, class: u8, message: &[u8], now_millis: u64) -> &[u8] {
        let class: DbErrorClass = class_of(class);
        let message = message.to_vec();
        self.push(now_millis, Input::Failed { class, message })
    }

    /// Finishes with an outcome in the lane's layout.
    pub fn finish(&mut self, outcome: &[u8], now_millis: u64) -> &[u8] {
        match lane_outcome(outcome) {
            Ok(outcome) => self.push(now_millis, Input::Finish(outcome)),
            Err(error) => self.fail(&E::from(error)),
        }
    }

    /// Pushes Redis's answer (the same layout on the lane and the wire).
    pub fn push_redis(&mut self, answer: &[u8], now_millis: u64) -> &[u8] {
        let mut reader = Reader::new(answer, "redis answer");
        match read_redis_answer(&mut reader).and_then(|answer| reader.end(answer)) {
            Ok(answer) => self.push(now_millis, Input::Redis(answer)),
            Err(error) => self.fail(&E::from(error)),
        }
    }

    /// Packs what the fast path came to since the last report into `out`
    /// (cleared first): the verdict's `u8` length and name, the failed
    /// writes (`u32`).
    pub fn take_fast_report(&mut self, out: &mut Vec<u8>) {
        let report: FastReport = self.wire.take_fast_report();
        out.clear();
        let lookup = report.lookup.unwrap_or("");
        out.push(u8::try_from(lookup.len()).unwrap_or(u8::MAX));
        out.extend_from_slice(lookup.as_bytes());
        out.extend_from_slice(&report.write_failures.to_le_bytes());
    }

    /// Packs `error` as the step (a binding's own failure).
    pub fn fail(&mut self, error: &E) -> &[u8] {
        self.wire.fail(error);
        self.rewrite()
    }

    /// The last step again.
    pub fn step(&self) -> &[u8] {
        &self.step
    }

    /// Rewrites the wire's last step into the lane's layout.
    fn rewrite(&mut self) -> &[u8] {
        self.step.clear();
        let step = self.wire.step();
        if lane_step(step, self.record, &mut self.step).is_err() {
            // Every step the wire packs is in its layout; should one not be,
            // the host still gets it as it is rather than nothing.
            self.step.clear();
            self.step.extend_from_slice(step);
        }
        &self.step
    }
}

/// Rewrites a wire step of a record (`record`) or relay into `out`.
fn lane_step(step: &[u8], record: bool, out: &mut Vec<u8>) -> Result<(), DriverError> {
    let mut reader = Reader::new(step, "step");
    let step_tag = reader.u8()?;
    out.push(step_tag);
    match step_tag {
        tag::RUN => {
            short_name(&mut reader, out)?;
            let count = reader.u32()?;
            out.push(u8::try_from(count).map_err(|_| reader.malformed())?);
            out.extend_from_slice(reader.rest()); // the values: the same layout
        }
        tag::YIELD if record => {
            reader.raw()?; // the decision's name
            for _ in 0..3 {
                put_u64(out, reader.u64()?);
            }
            let every = reader.optional(Reader::u64)?;
            let every = every
                .and_then(|every| i64::try_from(every).ok())
                .unwrap_or(-1);
            out.extend_from_slice(&every.to_le_bytes());
        }
        tag::DONE if record => {
            reader.raw()?; // the decision's name
            out.extend_from_slice(reader.rest()); // the end: the same layout
        }
        tag::REDIS => {
            out.push(reader.u8()?);
            short_name(&mut reader, out)?;
            put_bytes(out, reader.raw()?);
            for _ in 0..2 {
                let items = reader.list(|reader| reader.raw())?;
                out.push(u8::try_from(items.len()).map_err(|_| reader.malformed())?);
                for item in items {
                    put_bytes(out, item);
                }
            }
        }
        _ => {
            out.clear();
            out.extend_from_slice(step);
            return Ok(());
        }
    }
    reader.end(())
}

/// A name with a `u32` length read, written with a `u8` length.
fn short_name(reader: &mut Reader<'_>, out: &mut Vec<u8>) -> Result<(), DriverError> {
    let name = reader.raw()?;
    out.push(u8::try_from(name.len()).map_err(|_| reader.malformed())?);
    out.extend_from_slice(name);
    Ok(())
}

/// Reads rows in the lane's layout: `u32` row count, then per row a `u8`
/// column count and its values.
pub fn lane_rows(packed: &[u8]) -> Result<Vec<Vec<Value>>, DriverError> {
    let mut reader = Reader::new(packed, "rows");
    let rows = reader.u32()?;
    if rows as usize > packed.len() {
        return Err(malformed("rows"));
    }
    let mut out = Vec::with_capacity(rows as usize);
    for _ in 0..rows {
        let columns = reader.u8()?;
        let row = (0..columns)
            .map(|_| reader.value())
            .collect::<Result<Vec<_>, _>>()?;
        out.push(row);
    }
    reader.end(out)
}

/// Reads an outcome in the lane's layout: the wire's, except that a raised
/// failure is one text (read as the message of a type without a name).
pub fn lane_outcome(packed: &[u8]) -> Result<Outcome, DriverError> {
    let mut reader = Reader::new(packed, "outcome");
    if packed.first() == Some(&3) {
        reader.u8()?;
        let message = reader.bytes()?;
        return reader.end(Outcome::Raised {
            type_name: Vec::new(),
            message,
        });
    }
    let outcome = read_outcome(&mut reader)?;
    reader.end(outcome)
}
