//! An in-memory Redis that runs the fast path's three scripts as
//! `schema/redis/*.lua` do (entries with a time to live, `EVALSHA` refused
//! until a script is loaded by `EVAL`), with faults to inject.

use std::collections::{HashMap, HashSet};

use mintid::store::{FastAnswer, RedisCall};

/// One entry: its hash fields and when it expires.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// The hash's fields by name (`s f t c o ct b e`).
    pub fields: HashMap<&'static str, Vec<u8>>,
    /// When it expires, in Unix milliseconds.
    pub expires_at: u64,
}

/// The fake: entries by name, the scripts loaded, faults to answer with.
#[derive(Debug, Clone, Default)]
pub struct FakeRedis {
    /// Live entries by name.
    pub entries: HashMap<String, Entry>,
    /// The SHA-1 of every script loaded (by `EVAL`).
    pub loaded: HashSet<&'static str>,
    /// How many of the next calls fail (a timeout, a failover).
    pub failing: u32,
    /// Every call's script name, `EVAL` ones with a `!`.
    pub calls: Vec<String>,
}

const FIELDS: [&str; 8] = ["s", "f", "t", "c", "o", "ct", "b", "e"];

fn number(bytes: &[u8]) -> i64 {
    std::str::from_utf8(bytes).unwrap().parse().unwrap()
}

impl FakeRedis {
    /// A Redis that has every script loaded already.
    pub fn loaded() -> Self {
        let mut redis = Self::default();
        for script in [
            mintid::store::CHECK,
            mintid::store::SETTLE,
            mintid::store::FORGET,
        ] {
            redis.loaded.insert(script.sha1);
        }
        redis
    }

    /// Forgets every entry and script (`FLUSHALL`, `SCRIPT FLUSH`; a new
    /// primary that had not seen them).
    pub fn flush(&mut self) {
        self.entries.clear();
        self.loaded.clear();
    }

    /// Runs `call` at `now`, as the host would send it.
    pub fn run(&mut self, call: &RedisCall, now: u64) -> FastAnswer {
        self.calls.push(format!(
            "{}{}",
            call.script,
            if call.eval { "!" } else { "" }
        ));
        if self.failing > 0 {
            self.failing -= 1;
            return FastAnswer::Failed("timed out".into());
        }
        if call.eval {
            assert!(call.source.contains("KEYS[1]"));
            self.loaded.insert(call.sha1);
        } else if !self.loaded.contains(call.sha1) {
            return FastAnswer::NoScript;
        }
        let name = call.keys[0].clone();
        if self.entries.get(&name).is_some_and(|e| e.expires_at <= now) {
            self.entries.remove(&name);
        }
        let args = &call.args;
        match call.script {
            "check" => match self.entries.get(&name) {
                None => {
                    let mut fields = HashMap::new();
                    fields.insert("s", b"claiming".to_vec());
                    fields.insert("f", args[0].clone());
                    self.put(name, fields, now, &args[1]);
                    FastAnswer::Nil
                }
                Some(entry) => {
                    let mut out: Vec<Option<Vec<u8>>> = FIELDS
                        .iter()
                        .map(|field| entry.fields.get(field).cloned())
                        .collect();
                    out.push(Some((entry.expires_at - now).to_string().into_bytes()));
                    FastAnswer::Fields(out)
                }
            },
            "settle" => {
                if let Some(entry) = self.entries.get(&name) {
                    if entry.fields["s"] == b"done" {
                        let stored = (number(&entry.fields["c"]), number(&entry.fields["t"]));
                        if stored >= (number(&args[2]), number(&args[1])) {
                            return integer(0);
                        }
                    }
                }
                let mut fields = HashMap::new();
                for (field, at) in [
                    ("s", None),
                    ("f", Some(0)),
                    ("t", Some(1)),
                    ("c", Some(2)),
                    ("o", Some(3)),
                ] {
                    let value = at.map_or_else(|| b"done".to_vec(), |at: usize| args[at].clone());
                    fields.insert(field, value);
                }
                if args[4] == b"1" {
                    fields.insert("ct", args[5].clone());
                    fields.insert("b", args[6].clone());
                }
                if args[7] == b"1" {
                    fields.insert("e", args[8].clone());
                }
                self.put(name, fields, now, &args[9]);
                integer(1)
            }
            "forget" => {
                let Some(entry) = self.entries.get(&name) else {
                    return integer(0);
                };
                if entry.fields["s"] != b"done" {
                    self.entries.remove(&name);
                    return integer(1);
                }
                if args[1].is_empty() {
                    return integer(0);
                }
                let stored = (number(&entry.fields["c"]), number(&entry.fields["t"]));
                if stored <= (number(&args[1]), number(&args[0])) {
                    self.entries.remove(&name);
                    return integer(1);
                }
                integer(0)
            }
            other => panic!("no script {other}"),
        }
    }

    /// Sets the entry `name` to `fields`, living `ttl` (decimal text) from `now`.
    fn put(&mut self, name: String, fields: HashMap<&'static str, Vec<u8>>, now: u64, ttl: &[u8]) {
        let expires_at = now + number(ttl) as u64;
        self.entries.insert(name, Entry { fields, expires_at });
    }
}

/// An integer reply, as hosts push it: one field, its decimal text.
fn integer(value: i64) -> FastAnswer {
    FastAnswer::Fields(vec![Some(value.to_string().into_bytes())])
}
