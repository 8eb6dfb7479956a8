//! The wire: plain C entry points that carry every store driver, its spec,
//! inputs and steps each one packed byte string in `mintid-wire`'s layout
//! (`docs/spec.md`, "The wire"), and a key's canonical text.
//!
//! uniffi's Python pays about 5 µs for every buffer it allocates or frees
//! and lifts every value of an enum through interpreted code; uniffi's JVM
//! buffers are JNA structures allocated through one contended map. Through
//! the wire a step is one `ctypes` or JNA call with the input passed as a
//! pointer and the step copied into the caller's buffer. Every entry point
//! catches a panic (`internal.panic`): nothing unwinds across the boundary.

use std::panic::{AssertUnwindSafe, catch_unwind};

use mintid_wire::{Fields, Refusal, Wire};

use crate::error::MintidError;

impl Refusal for MintidError {
    fn fields(&self) -> Fields<'_> {
        let (part, position, problem) = self.place();
        Fields {
            code: self.code(),
            detail: self.detail(),
            part,
            position,
            problem,
            concern: self.concern(),
        }
    }

    fn out_of_range(detail: &str) -> Self {
        Self::argument("argument.out_of_range", detail)
    }
}

/// The layout's version (`mintid_wire::VERSION`): a host checks it when it
/// loads the library.
#[unsafe(no_mangle)]
pub extern "C" fn mintid_wire_version() -> u32 {
    mintid_wire::VERSION
}

/// Makes the wire of a packed spec; never null (free it with
/// [`mintid_wire_free`]). A spec the core refuses or cannot read makes a
/// wire whose every step is that failure.
///
/// # Safety
/// `spec` points to `spec_len` readable bytes (or is null with 0).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mintid_wire_new(
    spec: *const u8,
    spec_len: usize,
) -> *mut Wire<MintidError> {
    // SAFETY: the caller's contract.
    let spec = unsafe { slice(spec, spec_len) };
    let wire = catch_unwind(|| Wire::new(spec)).unwrap_or_else(|_| Wire::refused(&panicked()));
    Box::into_raw(Box::new(wire))
}

/// Pushes one packed input; packs the next step, copies it to `out` when it
/// fits in `cap` bytes, and returns its length either way (a longer step is
/// copied again by [`mintid_wire_step`]).
///
/// # Safety
/// `wire` is a live wire from [`mintid_wire_new`], used by one thread at a
/// time; `input` points to `input_len` readable bytes; `out` to `cap`
/// writable bytes (or is null with 0).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mintid_wire_call(
    wire: *mut Wire<MintidError>,
    input: *const u8,
    input_len: usize,
    out: *mut u8,
    cap: usize,
) -> usize {
    // SAFETY: the caller's contract.
    let (wire, input) = unsafe { (&mut *wire, slice(input, input_len)) };
    if catch_unwind(AssertUnwindSafe(|| {
        wire.call(input);
    }))
    .is_err()
    {
        wire.fail(&panicked());
    }
    // SAFETY: the caller's contract.
    unsafe { copy_out(wire.step(), out, cap) }
}

/// Copies the last step again into `out` (when it fits in `cap` bytes);
/// its length.
///
/// # Safety
/// As for [`mintid_wire_call`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mintid_wire_step(
    wire: *const Wire<MintidError>,
    out: *mut u8,
    cap: usize,
) -> usize {
    // SAFETY: the caller's contract.
    unsafe { copy_out((*wire).step(), out, cap) }
}

/// Frees a wire (null: nothing).
///
/// # Safety
/// `wire` comes from [`mintid_wire_new`], once, and no call on it is running.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mintid_wire_free(wire: *mut Wire<MintidError>) {
    if !wire.is_null() {
        // SAFETY: the caller's contract.
        drop(unsafe { Box::from_raw(wire) });
    }
}

/// The canonical text of the key `kind`, `scope`, `id` (each UTF-8 of its
/// length; a part that is not is read with U+FFFD, which the core refuses),
/// packed: `0` and the text's bytes, or a `FAIL` (`key.*`), copied as
/// [`mintid_wire_call`] copies a step; its length.
///
/// # Safety
/// Each part points to its length of readable bytes; `out` to `cap`
/// writable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mintid_wire_key_text(
    kind: *const u8,
    kind_len: usize,
    scope: *const u8,
    scope_len: usize,
    id: *const u8,
    id_len: usize,
    out: *mut u8,
    cap: usize,
) -> usize {
    // SAFETY: the caller's contract.
    let parts = unsafe {
        [
            slice(kind, kind_len),
            slice(scope, scope_len),
            slice(id, id_len),
        ]
    };
    let made = catch_unwind(|| {
        let [kind, scope, id] = parts.map(String::from_utf8_lossy);
        Ok(mintid::key::IdempotencyKey::new(&kind, &scope, &id)?.to_string())
    })
    .unwrap_or_else(|_| Err(panicked()));
    let mut packed = Vec::new();
    match made {
        Ok(text) => {
            packed.push(0);
            packed.extend_from_slice(text.as_bytes());
        }
        Err(error) => mintid_wire::pack_error(&mut packed, &error),
    }
    // SAFETY: the caller's contract.
    unsafe { copy_out(&packed, out, cap) }
}

/// Copies `packed` to `out` when it fits in `cap` bytes; its length either way.
///
/// # Safety
/// `out` points to `cap` writable bytes (or is null with `cap` 0).
pub(crate) unsafe fn copy_out(packed: &[u8], out: *mut u8, cap: usize) -> usize {
    if packed.len() <= cap && !out.is_null() {
        // SAFETY: the caller's contract; `packed` is not inside `out`.
        unsafe { std::ptr::copy_nonoverlapping(packed.as_ptr(), out, packed.len()) };
    }
    packed.len()
}

/// The failure of a call that panicked.
pub(crate) fn panicked() -> MintidError {
    MintidError::argument(
        "internal.panic",
        "the core panicked (a bug: please report it)",
    )
}

/// Reads `length` bytes at `data` (none for a null pointer).
///
/// # Safety
/// `data` points to `length` readable bytes, or is null with `length` 0.
pub(crate) unsafe fn slice<'a>(data: *const u8, length: usize) -> &'a [u8] {
    if data.is_null() || length == 0 {
        &[]
    } else {
        // SAFETY: the caller's contract.
        unsafe { std::slice::from_raw_parts(data, length) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mintid_wire::{Input, KeyParts, Outcome, Spec, input_tag, tag};

    /// One call through the C entry points, with a buffer too short at first.
    fn call(wire: *mut Wire<MintidError>, now: u64, input: Input) -> Vec<u8> {
        let mut packed = Vec::new();
        input.encode(now, &mut packed);
        let mut buffer = vec![0; 4];
        // SAFETY: a live wire and buffers of their lengths.
        let length = unsafe {
            mintid_wire_call(wire, packed.as_ptr(), packed.len(), buffer.as_mut_ptr(), 4)
        };
        if length > buffer.len() {
            buffer = vec![0; length];
            // SAFETY: as above.
            assert_eq!(
                unsafe { mintid_wire_step(wire, buffer.as_mut_ptr(), length) },
                length
            );
        }
        buffer.truncate(length);
        buffer
    }

    fn new(spec: &Spec) -> *mut Wire<MintidError> {
        let mut packed = Vec::new();
        spec.encode(&mut packed);
        // SAFETY: a spec of its length.
        unsafe { mintid_wire_new(packed.as_ptr(), packed.len()) }
    }

    fn record(kind: &str) -> Spec {
        Spec::Record {
            manifest: mintid::store::Manifest::new(
                mintid::store::Dialect::Sqlite,
                mintid::store::Placeholder::Question,
            ),
            policy: mintid::record::RecordPolicy::default(),
            way: mintid::store::Way::RunOnce,
            fast: None,
            key: KeyParts {
                kind: kind.into(),
                scope: "t".into(),
                id: "abc".into(),
            },
            digest: [7; 32],
            key_created_millis: None,
        }
    }

    fn code_of(packed: &[u8]) -> String {
        assert_eq!(packed[0], tag::FAIL, "not a failure: {packed:?}");
        let length = u32::from_le_bytes(packed[1..5].try_into().unwrap()) as usize;
        String::from_utf8(packed[5..5 + length].to_vec()).expect("a packed code")
    }

    #[test]
    fn a_record_claims_executes_completes_and_names_its_decision() {
        assert_eq!(mintid_wire_version(), 1);
        let wire = new(&record("order.create"));
        let claim = call(wire, 1_000, Input::Start);
        assert_eq!(
            &claim[..10],
            [tag::RUN, 5, 0, 0, 0, b'c', b'l', b'a', b'i', b'm']
        );
        let rows = Input::Rows(vec![vec![mintid::store::Value::Int(1)]]);
        let execute = call(wire, 1_001, rows);
        assert_eq!(
            &execute[..12],
            [
                tag::YIELD,
                7,
                0,
                0,
                0,
                b'e',
                b'x',
                b'e',
                b'c',
                b'u',
                b't',
                b'e'
            ]
        );
        let outcome = Outcome::Succeeded(mintid::store::StoredResponse {
            content_type: "application/json".into(),
            body: b"{}".to_vec(),
        });
        let complete = call(wire, 1_002, Input::Finish(outcome));
        assert_eq!(&complete[5..13], b"complete");
        let done = call(wire, 1_003, Input::Affected(1));
        assert_eq!(
            done,
            [
                tag::DONE,
                7,
                0,
                0,
                0,
                b'e',
                b'x',
                b'e',
                b'c',
                b'u',
                b't',
                b'e',
                0
            ]
        );
        let wrong = call(wire, 1_004, Input::Sent);
        assert_eq!(code_of(&wrong), "store.unexpected_row");
        // SAFETY: made once, freed once.
        unsafe { mintid_wire_free(wire) };
    }

    #[test]
    fn a_refused_key_or_an_unreadable_spec_or_input_is_a_typed_failure() {
        let wire = new(&record("Order"));
        assert_eq!(
            code_of(&call(wire, 1, Input::Start)),
            "key.invalid_character"
        );
        assert_eq!(
            code_of(&call(wire, 1, Input::Resume)),
            "key.invalid_character"
        );
        // SAFETY: made once, freed once.
        unsafe { mintid_wire_free(wire) };
        for spec in [&[][..], &[99, 0, 0], &[1, 7, 0]] {
            // SAFETY: a spec of its length.
            let wire = unsafe { mintid_wire_new(spec.as_ptr(), spec.len()) };
            assert_eq!(
                code_of(&call(wire, 1, Input::Start)),
                "store.unexpected_row"
            );
            // SAFETY: made once, freed once.
            unsafe { mintid_wire_free(wire) };
        }
        let wire = new(&record("order"));
        let mut buffer = [0; 256];
        for input in [&[][..], &[input_tag::START], &[42, 0, 0, 0, 0, 0, 0, 0, 0]] {
            // SAFETY: a live wire and buffers of their lengths.
            let length = unsafe {
                mintid_wire_call(wire, input.as_ptr(), input.len(), buffer.as_mut_ptr(), 256)
            };
            assert_eq!(code_of(&buffer[..length]), "store.unexpected_row");
        }
        // SAFETY: made once, freed once.
        unsafe { mintid_wire_free(wire) };
    }

    fn key_text(kind: &[u8], scope: &[u8], id: &[u8]) -> Vec<u8> {
        let mut buffer = vec![0; 8];
        let call = |buffer: &mut Vec<u8>| {
            // SAFETY: valid pointers and a buffer of its length.
            unsafe {
                mintid_wire_key_text(
                    kind.as_ptr(),
                    kind.len(),
                    scope.as_ptr(),
                    scope.len(),
                    id.as_ptr(),
                    id.len(),
                    buffer.as_mut_ptr(),
                    buffer.len(),
                )
            }
        };
        let length = call(&mut buffer);
        buffer.resize(length, 0);
        assert_eq!(call(&mut buffer), length);
        buffer
    }

    #[test]
    fn a_key_text_is_the_cores_or_its_typed_error() {
        assert_eq!(
            key_text(b"order.create", b"t:1", b"abc"),
            b"\0order.create:t%3A1:abc"
        );
        assert_eq!(
            code_of(&key_text(b"Order", b"t", b"abc")),
            "key.invalid_character"
        );
        assert_eq!(
            code_of(&key_text(b"order", b"t", &[b'a', 0xff])),
            "key.invalid_character"
        );
    }
}
