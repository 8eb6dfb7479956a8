# The cross-language matrix (tests/cross/): request IDs and grants made by Rust (the
# `mintid` tool and a server on mintid-store's tower layer), Python, Kotlin and a
# browser, checked by each of the others.
#
# It uses what the language suites build and install (the Python test venv, the
# io.mintid:mintid jar in ~/.m2, js/dist and Debian's chromium), so in `make test` it
# adds only the release build of the command-line tool and the run itself.

TEST_LAST_TARGETS += test-cross

.PHONY: test-cross cross-cli cross-rust-server

cross-cli:
	$(CARGO) build --release -p mintid-cli

# The Rust server party: an example of mintid-store (target/debug/examples/cross_party), as
# `cargo test --workspace` builds it (RUST_TEST): `cargo build -p mintid-store --example
# cross_party` resolved features for that package alone and compiled 46 crates a second time
# (mintid, mintid-store, sqlx, tokio, axum, redis…).
cross-rust-server:
	$(RUST_TEST) --no-run

test-cross: cross-cli cross-rust-server test-python test-kotlin js-build
	node --test tests/cross/
