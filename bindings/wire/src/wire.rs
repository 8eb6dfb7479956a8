//! [`Wire`]: one driver of any kind behind one buffer.

use alloc::vec::Vec;
use core::marker::PhantomData;

use crate::Refusal;
use crate::driver::Driver;
use crate::input::Input;
use crate::spec::Spec;
use crate::write::pack_error;

/// One driver made from a packed spec, and the buffer its last step is
/// packed in; failures pack as `E`'s fields. Every input answers with the
/// next step. A spec the core refuses (or cannot read) makes a wire whose
/// every step is that failure.
#[derive(Debug)]
pub struct Wire<E> {
    driver: Option<Driver>,
    step: Vec<u8>,
    error: PhantomData<fn() -> E>,
}

impl<E: Refusal> Wire<E> {
    /// The wire of a packed spec.
    pub fn new(spec: &[u8]) -> Self {
        match Spec::decode(spec) {
            Ok(spec) => Self::from_spec(spec),
            Err(error) => Self::refused(&E::from(error)),
        }
    }

    /// The wire of a decoded spec.
    pub fn from_spec(spec: Spec) -> Self {
        match Driver::make::<E>(spec) {
            Ok(driver) => Self {
                driver: Some(driver),
                step: Vec::with_capacity(128),
                error: PhantomData,
            },
            Err(error) => Self::refused(&error),
        }
    }

    /// A wire whose every step is `error`.
    pub fn refused(error: &E) -> Self {
        let mut step = Vec::new();
        pack_error(&mut step, error);
        Self {
            driver: None,
            step,
            error: PhantomData,
        }
    }

    /// Pushes one packed input; the next step (`store.unexpected_row` for
    /// an input not in the layout, or one this kind does not take).
    pub fn call(&mut self, input: &[u8]) -> &[u8] {
        match Input::decode(input) {
            Ok((now, input)) => self.push(now, input),
            Err(error) => self.fail(&E::from(error)),
        }
    }

    /// Pushes one decoded input at `now_millis`; the next step.
    pub fn push(&mut self, now_millis: u64, input: Input) -> &[u8] {
        if let Some(driver) = &mut self.driver {
            driver.push::<E>(now_millis, input, &mut self.step);
        }
        &self.step
    }

    /// Packs `error` as the step (a binding's own failure, e.g. a panic
    /// caught at its boundary), unless the wire was refused.
    pub fn fail(&mut self, error: &E) -> &[u8] {
        if self.driver.is_some() {
            pack_error(&mut self.step, error);
        }
        &self.step
    }

    /// The last step again.
    pub fn step(&self) -> &[u8] {
        &self.step
    }
}
