//! Packing the migration driver's steps (`docs/spec.md`, "The wire", kind
//! `9`): a statement to execute (`YIELD`), the versions (`DONE`).

use alloc::vec::Vec;

use mintid::store::{MigrationStep, MigrationYield};

use crate::write::{put_bytes, put_list};
use crate::{Refusal, step, tag};

/// Packs a migrator's step: `YIELD`, `version u32`, the statement (text);
/// `DONE`, the list of versions (`u32` each); or a common step.
pub fn pack<E: Refusal>(out: &mut Vec<u8>, step: MigrationStep) {
    step::pack::<_, E>(out, step, |out, yielded| match yielded {
        MigrationYield::Execute { version, sql } => {
            out.push(tag::YIELD);
            out.extend_from_slice(&version.to_le_bytes());
            put_bytes(out, sql.as_bytes());
        }
        MigrationYield::Done(versions) => {
            out.push(tag::DONE);
            put_list(out, versions.iter(), |out, version| {
                out.extend_from_slice(&version.to_le_bytes());
            });
        }
    });
}
