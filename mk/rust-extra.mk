# Fuzzing the core's parsers with cargo-fuzz (core/fuzz/, its own workspace).
# `make fuzz-smoke` (part of `make test`) runs each target a few seconds;
# `make fuzz` runs each one a minute. See core/fuzz/run.sh for how they are built.

CARGO_FUZZ_VERSION := 0.13.2
FUZZ_SMOKE_SECONDS ?= 3
FUZZ_SECONDS ?= 60

.PHONY: setup-fuzz fuzz-smoke fuzz

setup-fuzz:
	@$(CARGO) fuzz --version 2>/dev/null | grep -qF "$(CARGO_FUZZ_VERSION)" || \
	  $(CARGO) install cargo-fuzz --version $(CARGO_FUZZ_VERSION) --locked

fuzz-smoke: setup-fuzz
	$(CARGO) fmt --check --manifest-path core/fuzz/Cargo.toml
	CARGO=$(CARGO) core/fuzz/run.sh $(FUZZ_SMOKE_SECONDS)

fuzz: setup-fuzz
	CARGO=$(CARGO) core/fuzz/run.sh $(FUZZ_SECONDS)

TEST_TARGETS += fuzz-smoke
