//! One UUIDv7 generator making `count` IDs, for counting instructions per ID
//! under callgrind (load-independent, unlike a timing on a shared machine):
//!
//! `valgrind --tool=callgrind --callgrind-out-file=/dev/null target/release/examples/uuid7_instructions owned 200000`
//!
//! Run each generator twice (e.g. 100,000 and 200,000 IDs); the difference of
//! the totals over 100,000 is the cost of one ID, setup and exit left out.
//! Generators: `owned` (`Uuid7Generator::generate`), `shared`
//! (`SharedUuid7Generator::generate`), `now` (`uuid7::now()`), `ulid`
//! (`ulid::Generator::generate`), `uuid` (`uuid::Uuid::now_v7()`).

use std::hint::black_box;

use mintid::{SharedUuid7Generator, Uuid7Generator};

fn main() {
    let mut args = std::env::args().skip(1);
    let which = args.next().unwrap_or_default();
    let count: u64 = args.next().and_then(|n| n.parse().ok()).unwrap_or(100_000);
    match which.as_str() {
        "owned" => {
            let mut generator = Uuid7Generator::new();
            for _ in 0..count {
                black_box(generator.generate().expect("a UUIDv7"));
            }
        }
        "shared" => {
            let generator = SharedUuid7Generator::new();
            for _ in 0..count {
                black_box(generator.generate().expect("a UUIDv7"));
            }
        }
        "now" => {
            for _ in 0..count {
                black_box(mintid::uuid7::now().expect("a UUIDv7"));
            }
        }
        "ulid" => {
            let mut generator = ulid::Generator::new();
            for _ in 0..count {
                black_box(generator.generate().expect("a ULID"));
            }
        }
        "uuid" => {
            for _ in 0..count {
                black_box(uuid::Uuid::now_v7());
            }
        }
        other => panic!("unknown generator {other:?}: owned, shared, now, ulid or uuid"),
    }
}
