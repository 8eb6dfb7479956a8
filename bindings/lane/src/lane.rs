//! A driver on the lane: its steps packed into one buffer, answers read
//! from packed bytes.

use alloc::string::String;
use alloc::vec::Vec;
use core::marker::PhantomData;

use mintid::store::{Answer, DbError, Step};

use crate::Refusal;
use crate::read::{class_of, unpack_rows};
use crate::write::{pack_error, pack_step};

/// A core driver the lane carries: how it takes an answer and resumes, and
/// how its own yields pack.
pub trait Driven {
    /// What it yields besides database steps and pauses.
    type Yield;

    /// Pushes the database's answer to the last `Run`.
    fn push(&mut self, answer: Answer, now_millis: u64) -> Step<Self::Yield>;

    /// Continues after a pause.
    fn resume(&mut self) -> Step<Self::Yield>;

    /// Appends a yield: its tag ([`crate::tag::YIELD`] or
    /// [`crate::tag::DONE`]) and what follows.
    fn put_yield(out: &mut Vec<u8>, yielded: Self::Yield);
}

/// A driver and the buffer its last step is packed in; errors pack as
/// `E`'s fields. Every call answers with the next step.
#[derive(Debug)]
pub struct Lane<D, E> {
    pub(crate) driver: D,
    step: Vec<u8>,
    error: PhantomData<fn() -> E>,
}

impl<D: Driven, E: Refusal> Lane<D, E> {
    /// The lane of `driver`.
    pub fn new(driver: D) -> Self {
        Self {
            driver,
            step: Vec::with_capacity(128),
            error: PhantomData,
        }
    }

    /// Runs `call` on the driver and packs the step it returns.
    pub fn drive(&mut self, call: impl FnOnce(&mut D) -> Step<D::Yield>) -> &[u8] {
        let step = call(&mut self.driver);
        pack_step::<_, E>(&mut self.step, step, D::put_yield);
        &self.step
    }

    /// Pushes an affected-row count.
    pub fn push_affected(&mut self, count: u64, now_millis: u64) -> &[u8] {
        self.drive(|driver| driver.push(Answer::Affected(count), now_millis))
    }

    /// Pushes packed rows (`store.unexpected_row` when not in the layout).
    pub fn push_rows(&mut self, rows: &[u8], now_millis: u64) -> &[u8] {
        match unpack_rows(rows) {
            Ok(rows) => self.drive(|driver| driver.push(Answer::Rows(rows), now_millis)),
            Err(error) => self.fail(&E::from(error)),
        }
    }

    /// Pushes a failed query: the executor's class ([`class_of`]) and the
    /// database driver's message.
    pub fn push_failed(&mut self, class: u8, message: String, now_millis: u64) -> &[u8] {
        let error = DbError {
            class: class_of(class),
            message,
        };
        self.drive(|driver| driver.push(Answer::Failed(error), now_millis))
    }

    /// Continues after a pause.
    pub fn resume(&mut self) -> &[u8] {
        self.drive(D::resume)
    }

    /// Packs `error` as the step (a binding's own failure, e.g. a panic
    /// caught at its boundary).
    pub fn fail(&mut self, error: &E) -> &[u8] {
        pack_error(&mut self.step, error);
        &self.step
    }

    /// The last step again.
    pub fn step(&self) -> &[u8] {
        &self.step
    }
}
