# The Rust store (rust/store, crate mintid-store): its tests run in `make test`'s
# `cargo test --workspace` (the conformance scenarios on SQLite, and on PostgreSQL and
# MariaDB through the servers that `make test` starts). `make bench-rust-store`: the
# store beside raw sqlx running the same two statements (figures in docs/benchmarks.md).

BENCH_TARGETS += bench-rust-store
RUST_STORE_BENCH_FLAGS ?= --seconds 2 --rounds 3

.PHONY: bench-rust-store

bench-rust-store:
	scripts/db/with-db.sh $(CARGO) bench -p mintid-store --bench store -- $(RUST_STORE_BENCH_FLAGS)
