# The Rust store (rust/store, crate mintid-store): its tests run in `make test`'s
# `cargo test --workspace` (every conformance scenario file, the HTTP scenarios through
# the tower layer and the axum example, on SQLite, and on PostgreSQL and MariaDB through
# the servers that `make test` starts; the Redis fast path's tests, feature `redis`, on its
# Redis Cluster too). `make bench-rust-store`: the store beside raw
# sqlx running the same two statements; `make bench-rust-layer`: axum with the layer
# beside axum without it and beside `run_once` alone (figures in docs/benchmarks.md).

BENCH_TARGETS += bench-rust-store bench-rust-layer
# The package's own tests enable `redis` (and `axum`): lint the library without them too.
TEST_TARGETS += lint-rust-store-default
RUST_STORE_BENCH_FLAGS ?= --seconds 2 --rounds 3

.PHONY: bench-rust-store bench-rust-layer lint-rust-store-default

lint-rust-store-default:
	$(CARGO) clippy -p mintid-store --lib -- -D warnings

bench-rust-store:
	scripts/db/with-db.sh $(CARGO) bench -p mintid-store --bench store -- $(RUST_STORE_BENCH_FLAGS)

bench-rust-layer:
	scripts/db/with-db.sh $(CARGO) bench -p mintid-store --bench layer -- $(RUST_STORE_BENCH_FLAGS)
