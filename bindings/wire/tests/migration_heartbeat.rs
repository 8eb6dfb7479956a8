//! The migration and heartbeat kinds driven through a wire: the steps come
//! packed as `docs/spec.md` ("The wire") says, from the core's drivers.

use mintid::store::{Dialect, DriverError, Held, Manifest, Placeholder};
use mintid_wire::{Fields, Input, KeyParts, Refusal, Spec, Wire, tag};

/// A refusal the tests never expect to pack.
#[derive(Debug)]
struct Unexpected(String);

impl From<DriverError> for Unexpected {
    fn from(error: DriverError) -> Self {
        Self(error.to_string())
    }
}

impl From<mintid::key::KeyError> for Unexpected {
    fn from(error: mintid::key::KeyError) -> Self {
        Self(error.to_string())
    }
}

impl From<mintid::SnowflakeError> for Unexpected {
    fn from(error: mintid::SnowflakeError) -> Self {
        Self(error.to_string())
    }
}

impl Refusal for Unexpected {
    fn out_of_range(detail: &str) -> Self {
        Self(detail.into())
    }

    fn fields(&self) -> Fields<'_> {
        Fields {
            code: "test.unexpected",
            detail: &self.0,
            part: None,
            position: None,
            problem: None,
            concern: "test",
        }
    }
}

fn manifest() -> Manifest {
    Manifest::new(Dialect::Sqlite, Placeholder::Question)
}

/// A `RUN` step's query name.
fn run_name(step: &[u8]) -> String {
    assert_eq!(step[0], tag::RUN, "{step:?}");
    let len = u32::from_le_bytes(step[1..5].try_into().unwrap()) as usize;
    String::from_utf8(step[5..5 + len].to_vec()).unwrap()
}

#[test]
fn a_migration_run_crosses_the_wire_statement_by_statement() {
    let mut wire = Wire::<Unexpected>::from_spec(Spec::Migrations {
        manifest: manifest(),
        pending: false,
    });
    assert_eq!(run_name(wire.push(0, Input::Start)), "migration_lock");
    let locked = Input::Rows(vec![vec![mintid::store::Value::Int(1)]]);
    assert_eq!(run_name(wire.push(0, locked)), "migrations_table");
    assert_eq!(
        run_name(wire.push(0, Input::Affected(0))),
        "applied_migrations"
    );
    assert_eq!(wire.push(0, Input::Rows(vec![])), [tag::BEGIN, 1]);
    assert_eq!(
        run_name(wire.push(0, Input::Affected(0))),
        "applied_migrations"
    );
    let execute = wire.push(0, Input::Rows(vec![])).to_vec();
    assert_eq!(execute[0], tag::YIELD);
    assert_eq!(u32::from_le_bytes(execute[1..5].try_into().unwrap()), 1);
    let sql_len = u32::from_le_bytes(execute[5..9].try_into().unwrap()) as usize;
    assert_eq!(execute.len(), 9 + sql_len);
    let first = manifest().migrations()[0].statements[0];
    assert_eq!(&execute[9..], first.as_bytes());
    // A `stop` is no input of a migration: a typed failure, never a panic.
    assert_eq!(wire.push(0, Input::Stop)[0], tag::FAIL);
}

#[test]
fn a_heartbeat_crosses_the_wire_and_stops() {
    let mut wire = Wire::<Unexpected>::from_spec(Spec::Heartbeat {
        manifest: manifest(),
        policy: mintid::record::RecordPolicy::new(900, 100_000).unwrap(),
        key: KeyParts {
            kind: "order.create".into(),
            scope: "t".into(),
            id: "1".into(),
        },
        held: Held {
            token: 1,
            created_millis: 1_000,
            lease_deadline_millis: 1_900,
            renew_every_millis: Some(300),
        },
    });
    // Every pause is a yield that carries the deadline as last renewed.
    assert_eq!(pause(wire.push(1_000, Input::Start)), (300, 1_900));
    assert_eq!(run_name(wire.push(1_300, Input::Resume)), "renew");
    assert_eq!(pause(wire.push(1_310, Input::Affected(1))), (300, 2_200));
    assert_eq!(run_name(wire.push(1_610, Input::Resume)), "renew");
    let done = wire.push(1_620, Input::Stop).to_vec();
    assert_eq!(done[0], tag::DONE);
    assert_eq!(u64_at(&done, 1), 2_200);
}

fn u64_at(step: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(step[at..at + 8].try_into().unwrap())
}

/// A heartbeat's `YIELD`: the pause's millis and the deadline it carries.
fn pause(step: &[u8]) -> (u64, u64) {
    assert_eq!((step[0], step.len()), (tag::YIELD, 17), "{step:?}");
    (u64_at(step, 1), u64_at(step, 9))
}
