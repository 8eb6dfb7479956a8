//! The wire for JS: every store driver with its spec, inputs and steps as
//! packed bytes (`mintid-wire`'s layout, `docs/spec.md` "The wire").
//!
//! A step through wasm-bindgen's objects costs one import per field;
//! through the wire it is one `Uint8Array` the TypeScript layer reads with a
//! `DataView`, and an input one it writes.

use alloc::string::{String, ToString};
use alloc::vec::Vec;

use mintid_wire::{Fields, Refusal};
use wasm_bindgen::prelude::*;

use crate::error::CoreError;

/// A core error as the wire packs it (the TypeScript layer throws the
/// package's class for its code).
pub(crate) struct PackedError {
    code: &'static str,
    detail: String,
    part: Option<&'static str>,
    position: Option<u64>,
    problem: Option<&'static str>,
}

impl<T: CoreError> From<T> for PackedError {
    fn from(error: T) -> Self {
        Self {
            code: error.code(),
            detail: error.to_string(),
            part: error.part(),
            position: error.position().map(|position| position as u64),
            problem: error.problem(),
        }
    }
}

impl Refusal for PackedError {
    fn fields(&self) -> Fields<'_> {
        Fields {
            code: self.code,
            detail: &self.detail,
            part: self.part,
            position: self.position,
            problem: self.problem,
            concern: self.code.split('.').next().unwrap_or(self.code),
        }
    }

    fn out_of_range(detail: &str) -> Self {
        Self {
            code: "argument.out_of_range",
            detail: detail.into(),
            part: None,
            position: None,
            problem: None,
        }
    }
}

/// The layout's version: the TypeScript layer checks it when it loads the
/// module.
#[wasm_bindgen(js_name = wireVersion)]
pub fn wire_version() -> u32 {
    mintid_wire::VERSION
}

/// One driver of any kind made from its packed spec: every input answers
/// with the next step, packed. A spec the core refuses or cannot read makes
/// a wire whose every step is that failure.
#[wasm_bindgen]
pub struct Wire(mintid_wire::Wire<PackedError>);

#[wasm_bindgen]
impl Wire {
    /// The wire of a packed spec.
    #[wasm_bindgen(constructor)]
    pub fn new(spec: &[u8]) -> Wire {
        Wire(mintid_wire::Wire::new(spec))
    }

    /// Pushes one packed input; the next step.
    pub fn call(&mut self, input: &[u8]) -> Vec<u8> {
        self.0.call(input).to_vec()
    }

    /// The last step again.
    pub fn step(&self) -> Vec<u8> {
        self.0.step().to_vec()
    }
}
