# mintid: the one entry point. `make demo` and `make test` work on a fresh machine.
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

CARGO ?= cargo
NO_STD_TARGETS := wasm32-unknown-unknown thumbv7em-none-eabihf

.PHONY: help demo test test-suites test-rust lint fmt bench setup-rust no-std

# Each host language adds its targets in mk/<language>.mk:
# TEST_TARGETS += test-<language>, BENCH_TARGETS += bench-<language>.
# A suite that needs other suites (the cross-language matrix) goes in TEST_LAST_TARGETS.
TEST_TARGETS :=
TEST_LAST_TARGETS :=
BENCH_TARGETS :=
include $(sort $(wildcard mk/*.mk))

help:
	@echo "make demo   the checkout demo: a browser that double-submits, an order placed once"
	@echo "make test   every test in every language (installs what it needs)"
	@echo "make bench  benchmarks beside the peers (writes nothing; copy figures to docs/benchmarks.md)"
	@echo "make fmt    format the code"
	@echo "make dist   release artifacts in dist/ (wheels, jar, npm tarball, crates), each checked (docs/release.md)"

setup-rust:
	@rustup component add rustfmt clippy >/dev/null 2>&1 || true
	@for t in $(NO_STD_TARGETS); do \
	  rustup target list --installed | grep -qx $$t || rustup target add $$t; \
	done

demo:
	$(CARGO) build --release -p mintid-cli
	@bash scripts/demo-cli.sh target/release/mintid
	@$(MAKE) --no-print-directory demo-serve

# One pair of throwaway database servers serves every suite; they stop at the end,
# also when a suite fails.
test:
	scripts/db/with-db.sh $(MAKE) --no-print-directory test-suites

# Each suite prints a line when it ends, `make test: test-python took 412 s`: the time since
# the previous suite ended (in a serial run, as CI's), so the suite and whatever of its
# prerequisites no earlier suite built. The last suites need the others, so their lines are
# their own. A failing suite stops the run as before, without a line.
SUITES := test-rust $(TEST_TARGETS) $(TEST_LAST_TARGETS)
SUITE_CLOCK := $(shell date +%s)

test-suites: $(addprefix timed-,$(SUITES))
	@echo "make test: all suites passed"

# The recipe is expanded when its suite has ended: it prints, then restarts the clock.
.PHONY: $(addprefix timed-,$(SUITES))
$(addprefix timed-,$(SUITES)): timed-%: %
	@echo "make test: $* took $$(($(shell date +%s) - $(SUITE_CLOCK))) s"$(eval SUITE_CLOCK := $(shell date +%s))

# The workspace's tests. A target that runs a binary of the workspace builds it with
# `$(RUST_TEST) --no-run`: the same features, so after test-rust nothing (a `-p` build
# resolves the features of one package and builds much of the tree again).
RUST_TEST := $(CARGO) test --workspace --exclude mintid-bench

test-rust: setup-rust lint no-std
	$(RUST_TEST)

lint: setup-rust
	$(CARGO) fmt --all --check
	$(CARGO) clippy --workspace --all-targets -- -D warnings

no-std: setup-rust
	@for t in $(NO_STD_TARGETS); do \
	  echo "no_std build for $$t"; \
	  $(CARGO) build -p mintid --no-default-features --target $$t; \
	done

fmt:
	$(CARGO) fmt --all

bench: bench-rust $(BENCH_TARGETS)

bench-rust:
	$(CARGO) bench -p mintid-bench
