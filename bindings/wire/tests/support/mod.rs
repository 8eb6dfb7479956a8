//! What the tests that drive a [`Wire`] share: a refusal that packs the
//! core's code and message, and readers of a packed step.

use mintid::store::DriverError;
use mintid_wire::{Fields, Input, Refusal, Spec, Wire, tag};

/// A failure packed with its code and message.
pub struct Packed {
    code: &'static str,
    detail: String,
}

impl From<DriverError> for Packed {
    fn from(error: DriverError) -> Self {
        Self {
            code: error.code(),
            detail: error.to_string(),
        }
    }
}

impl From<mintid::key::KeyError> for Packed {
    fn from(error: mintid::key::KeyError) -> Self {
        Self {
            code: error.code(),
            detail: error.to_string(),
        }
    }
}

impl From<mintid::SnowflakeError> for Packed {
    fn from(error: mintid::SnowflakeError) -> Self {
        Self {
            code: error.code(),
            detail: error.to_string(),
        }
    }
}

impl Refusal for Packed {
    fn fields(&self) -> Fields<'_> {
        Fields {
            code: self.code,
            detail: &self.detail,
            part: None,
            position: None,
            problem: None,
            concern: self.code.split('.').next().unwrap_or(self.code),
        }
    }

    fn out_of_range(detail: &str) -> Self {
        Self {
            code: "argument.out_of_range",
            detail: detail.into(),
        }
    }
}

/// The wire of `spec`, packed.
pub fn wire(spec: &Spec) -> Wire<Packed> {
    let mut packed = Vec::new();
    spec.encode(&mut packed);
    Wire::new(&packed)
}

/// Pushes `input` at `now`; the step.
pub fn call_at(wire: &mut Wire<Packed>, now: u64, input: Input) -> Vec<u8> {
    let mut packed = Vec::new();
    input.encode(now, &mut packed);
    wire.call(&packed).to_vec()
}

/// A little-endian `u64` at `at`.
pub fn u64_at(step: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(step[at..at + 8].try_into().unwrap())
}

/// A `u32`-length text at `at`.
pub fn text_at(step: &[u8], at: usize) -> &str {
    let length = u32::from_le_bytes(step[at..at + 4].try_into().unwrap()) as usize;
    std::str::from_utf8(&step[at + 4..at + 4 + length]).unwrap()
}

/// A `RUN` step's query name.
pub fn run_name(step: &[u8]) -> &str {
    assert_eq!(step[0], tag::RUN, "not a run: {step:?}");
    text_at(step, 1)
}

/// A `FAIL` step's code.
pub fn code(step: &[u8]) -> &str {
    assert_eq!(step[0], tag::FAIL, "not a failure: {step:?}");
    text_at(step, 1)
}
