//! Runs every case of the shared vectors in `tests/vectors/snowflake.json`.
//!
//! A case with an unknown `op`, or with a field this runner does not read,
//! fails the test: nothing in the file goes unchecked.

use std::cell::RefCell;
use std::collections::BTreeSet;

use mintid::{
    Clock, ManualClock, RollbackPolicy, SequencePolicy, Snowflake, SnowflakeError, SnowflakeId,
    SnowflakeLayout,
};
use serde_json::{Map, Value};

mod common;

/// A JSON object whose fields are marked as they are read.
struct Fields<'a> {
    what: String,
    map: &'a Map<String, Value>,
    read: RefCell<BTreeSet<&'a str>>,
}

impl<'a> Fields<'a> {
    fn new(what: String, value: &'a Value) -> Self {
        let map = value
            .as_object()
            .unwrap_or_else(|| panic!("{what}: not an object"));
        Self {
            what,
            map,
            read: RefCell::default(),
        }
    }

    fn get(&self, key: &str) -> Option<&'a Value> {
        let (key, value) = self.map.get_key_value(key)?;
        self.read.borrow_mut().insert(key.as_str());
        Some(value)
    }

    fn need(&self, key: &str) -> &'a Value {
        self.get(key)
            .unwrap_or_else(|| panic!("{}: missing {key:?}", self.what))
    }

    fn str(&self, key: &str) -> &'a str {
        self.need(key)
            .as_str()
            .unwrap_or_else(|| panic!("{}: {key:?} is not a string", self.what))
    }

    /// A 64-bit integer, written as a decimal string.
    fn u64(&self, key: &str) -> u64 {
        let text = self.str(key);
        text.parse()
            .unwrap_or_else(|_| panic!("{}: {key:?} = {text:?} is not a u64", self.what))
    }

    fn opt_u64(&self, key: &str) -> Option<u64> {
        self.map.contains_key(key).then(|| self.u64(key))
    }

    /// A small integer (bit counts, counts), written as a JSON number.
    fn small(&self, key: &str) -> u64 {
        self.need(key)
            .as_u64()
            .unwrap_or_else(|| panic!("{}: {key:?} is not a number", self.what))
    }

    fn bits(&self, key: &str) -> u8 {
        u8::try_from(self.small(key)).unwrap_or_else(|_| panic!("{}: {key:?} too large", self.what))
    }

    fn strings(&self, key: &str) -> Vec<&'a str> {
        let list = self.need(key).as_array();
        let list = list.unwrap_or_else(|| panic!("{}: {key:?} is not a list", self.what));
        list.iter()
            .map(|v| {
                v.as_str()
                    .unwrap_or_else(|| panic!("{}: {key:?}", self.what))
            })
            .collect()
    }

    fn error(&self) -> Option<&'a str> {
        self.map.contains_key("error").then(|| self.str("error"))
    }

    /// Fails unless every field was read.
    fn all_read(self) {
        let read = self.read.into_inner();
        let unread: Vec<_> = self
            .map
            .keys()
            .filter(|k| !read.contains(k.as_str()))
            .collect();
        assert!(
            unread.is_empty(),
            "{}: unknown fields {unread:?}",
            self.what
        );
    }
}

/// Checks `result` against the case: an error code in `error`, or `check`.
fn expect<T: std::fmt::Debug>(
    fields: &Fields,
    result: Result<T, SnowflakeError>,
    check: impl FnOnce(T),
) {
    match (fields.error(), result) {
        (Some(code), Err(error)) => assert_eq!(error.code(), code, "{}: {error}", fields.what),
        (Some(code), Ok(value)) => panic!("{}: expected {code}, got {value:?}", fields.what),
        (None, Err(error)) => panic!("{}: unexpected error {error}", fields.what),
        (None, Ok(value)) => check(value),
    }
}

fn layout(fields: &Fields) -> Result<SnowflakeLayout, SnowflakeError> {
    let value = fields.need("layout");
    if let Some(name) = value.as_str() {
        return SnowflakeLayout::preset(name);
    }
    let spec = Fields::new(format!("{}: layout", fields.what), value);
    let built = SnowflakeLayout::new(
        spec.bits("time_bits"),
        spec.bits("worker_bits"),
        spec.bits("sequence_bits"),
        spec.u64("epoch_millis"),
        spec.u64("tick_millis"),
    )
    .and_then(|layout| match spec.get("datacenter_bits") {
        Some(_) => layout.with_datacenter_bits(spec.bits("datacenter_bits")),
        None => Ok(layout),
    });
    spec.all_read();
    built
}

fn check_id(fields: &Fields, id: SnowflakeId) {
    assert_eq!(id.get(), fields.u64("id"), "{}", fields.what);
    assert_eq!(id.to_base32(), fields.str("base32"), "{}", fields.what);
}

fn run_layout(case: &Fields) {
    let layout = layout(case).unwrap_or_else(|e| panic!("{}: {e}", case.what));
    let expect = Fields::new(format!("{}: expect", case.what), case.need("expect"));
    let now = case.opt_u64("now_unix_millis");
    for key in expect.map.keys() {
        let actual = match key.as_str() {
            "time_bits" => Value::from(layout.time_bits()),
            "worker_bits" => Value::from(layout.worker_bits()),
            "sequence_bits" => Value::from(layout.sequence_bits()),
            "datacenter_bits" => Value::from(layout.datacenter_bits()),
            "js_safe" => Value::from(layout.is_js_safe()),
            "epoch_millis" => layout.epoch_millis().to_string().into(),
            "tick_millis" => layout.tick_millis().to_string().into(),
            "max_worker" => layout.max_worker().to_string().into(),
            "max_sequence" => layout.max_sequence().to_string().into(),
            "max_id" => layout.max_id().to_string().into(),
            "lifetime_millis" => layout.lifetime_millis().to_string().into(),
            "expires_at_unix_millis" => layout.expires_at_unix_millis().to_string().into(),
            "remaining_millis" => {
                let now = now.unwrap_or_else(|| {
                    panic!("{}: remaining_millis needs now_unix_millis", case.what)
                });
                layout.remaining_millis(now).to_string().into()
            }
            other => panic!("{}: unknown expectation {other:?}", case.what),
        };
        assert_eq!(expect.get(key), Some(&actual), "{}: {key}", case.what);
    }
    expect.all_read();
}

fn run_compose(case: &Fields) {
    let result = layout(case).and_then(|layout| {
        let (worker, sequence) = (case.u64("worker"), case.u64("sequence"));
        match case.opt_u64("tick") {
            Some(tick) => layout.compose_tick(tick, worker, sequence),
            None => layout.compose(case.u64("unix_millis"), worker, sequence),
        }
    });
    expect(case, result, |id| check_id(case, id));
}

fn run_decode(case: &Fields) {
    let layout = layout(case).unwrap_or_else(|e| panic!("{}: {e}", case.what));
    let result = SnowflakeId::new(case.u64("id")).and_then(|id| layout.decode(id));
    expect(case, result, |parts| {
        assert_eq!(parts.unix_millis, case.u64("unix_millis"), "{}", case.what);
        assert_eq!(parts.tick, case.u64("tick"), "{}", case.what);
        assert_eq!(parts.worker, case.u64("worker"), "{}", case.what);
        assert_eq!(parts.sequence, case.u64("sequence"), "{}", case.what);
    });
}

fn run_worker_id(case: &Fields) {
    let layout = layout(case).unwrap_or_else(|e| panic!("{}: {e}", case.what));
    let (datacenter, worker) = (case.u64("datacenter"), case.u64("worker"));
    expect(case, layout.worker_id(datacenter, worker), |id| {
        assert_eq!(id, case.u64("worker_id"), "{}", case.what);
        assert_eq!(
            layout.split_worker_id(id),
            (datacenter, worker),
            "{}",
            case.what
        );
    });
}

fn run_parse(case: &Fields, parse: fn(&str) -> Result<SnowflakeId, SnowflakeError>) {
    expect(case, parse(case.str("text")), |id| {
        check_id(case, id);
        assert_eq!(id.to_string(), case.str("id"), "{}", case.what);
    });
}

fn rollback_policy(case: &Fields) -> RollbackPolicy {
    let Some(value) = case.get("rollback") else {
        return RollbackPolicy::DEFAULT;
    };
    let spec = Fields::new(format!("{}: rollback", case.what), value);
    let policy = match spec.str("policy") {
        "fail" => RollbackPolicy::Fail,
        "wait" => RollbackPolicy::Wait {
            max_millis: spec.u64("max_millis"),
        },
        "logical" => RollbackPolicy::Logical {
            max_millis: spec.u64("max_millis"),
        },
        other => panic!("{}: unknown rollback policy {other:?}", case.what),
    };
    spec.all_read();
    policy
}

fn sequence_policy(case: &Fields) -> SequencePolicy {
    let Some(value) = case.get("sequence_policy") else {
        return SequencePolicy::Wait;
    };
    let spec = Fields::new(format!("{}: sequence_policy", case.what), value);
    let policy = match spec.str("policy") {
        "wait" => SequencePolicy::Wait,
        "borrow_ahead" => SequencePolicy::BorrowAhead {
            max_ticks: spec.u64("max_ticks"),
        },
        other => panic!("{}: unknown sequence policy {other:?}", case.what),
    };
    spec.all_read();
    policy
}

fn run_generate(case: &Fields) {
    let layout = layout(case).unwrap_or_else(|e| panic!("{}: {e}", case.what));
    let clock_spec = Fields::new(format!("{}: clock", case.what), case.need("clock"));
    let clock = ManualClock::new(clock_spec.u64("start_millis"));
    let advancing = clock_spec.need("advance_on_pause").as_bool();
    let clock = match advancing {
        Some(true) => clock.advancing_on_pause(),
        Some(false) => clock,
        None => panic!("{}: advance_on_pause is not a boolean", case.what),
    };
    clock_spec.all_read();

    let mut builder = Snowflake::builder(layout, case.u64("worker"), &clock)
        .rollback(rollback_policy(case))
        .sequence_policy(sequence_policy(case));
    if let Some(id) = case.opt_u64("starting_after_id") {
        builder = builder.starting_after_id(SnowflakeId::new(id).unwrap());
    }
    if let Some(unix_millis) = case.opt_u64("starting_after_unix_millis") {
        builder = builder.starting_after_unix_millis(unix_millis);
    }
    let steps = case.need("steps").as_array().expect("steps is a list");
    let generator = match (case.error(), builder.build()) {
        (Some(code), Err(error)) => {
            assert_eq!(error.code(), code, "{}", case.what);
            assert!(steps.is_empty(), "{}: steps after a build error", case.what);
            return;
        }
        (_, result) => result.unwrap_or_else(|e| panic!("{}: {e}", case.what)),
    };

    for (i, step) in steps.iter().enumerate() {
        let step = Fields::new(format!("{} step {i}", case.what), step);
        if let Some(ms) = step.opt_u64("clock_millis") {
            clock.set_millis(ms);
        }
        let count = usize::try_from(step.small("count")).unwrap();
        let result = match step.str("call") {
            "next" if step.error().is_some() => {
                assert_eq!(count, 1, "{}: a failing step makes one call", step.what);
                generator.next_id().map(|id| vec![id.get()])
            }
            "next" => (0..count)
                .map(|_| generator.next_id().map(u64::from))
                .collect::<Result<Vec<_>, _>>(),
            "batch" => generator.next_batch(count),
            other => panic!("{}: unknown call {other:?}", step.what),
        };
        expect(&step, result, |ids| {
            let expected: Vec<u64> = step
                .strings("ids")
                .iter()
                .map(|id| id.parse().unwrap())
                .collect();
            assert_eq!(ids, expected, "{}", step.what);
            let texts: Vec<_> = ids
                .iter()
                .map(|&id| SnowflakeId::new(id).unwrap().to_base32())
                .collect();
            assert_eq!(texts, step.strings("base32"), "{}", step.what);
        });
        if let Some(ms) = step.opt_u64("clock_after_millis") {
            assert_eq!(clock.now_millis(), ms, "{}: clock after", step.what);
        }
        if let Some(id) = step.opt_u64("high_water") {
            assert_eq!(
                generator.high_water().map(u64::from),
                Some(id),
                "{}",
                step.what
            );
        }
        step.all_read();
    }
}

#[test]
fn shared_vectors() {
    let file = common::vectors("snowflake.json");
    let top = Fields::new("snowflake.json".into(), &file);
    top.str("description");
    let cases = top.need("cases").as_array().expect("cases is a list");
    top.all_read();
    assert!(!cases.is_empty());
    let mut names = BTreeSet::new();
    for value in cases {
        let name = value["name"].as_str().expect("every case has a name");
        assert!(names.insert(name), "duplicate case name {name:?}");
        let case = Fields::new(name.to_string(), value);
        case.str("name");
        match case.str("op") {
            "layout" => run_layout(&case),
            "layout_invalid" => {
                assert!(
                    case.error().is_some(),
                    "{name}: layout_invalid needs an error"
                );
                expect(&case, layout(&case), |_| ());
            }
            "compose" => run_compose(&case),
            "decode" => run_decode(&case),
            "worker_id" => run_worker_id(&case),
            "parse_decimal" => run_parse(&case, SnowflakeId::from_decimal),
            "parse_base32" => run_parse(&case, SnowflakeId::from_base32),
            "generate" => run_generate(&case),
            other => panic!("{name}: unknown op {other:?}"),
        }
        case.all_read();
    }
}
