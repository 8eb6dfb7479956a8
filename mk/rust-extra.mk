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

# The model check of the store drivers (core/tests/model_check.rs, docs/spec.md "Model
# check"): `cargo test -p mintid` (part of `make test`) runs it at the quick depths;
# `make model-check-deep` runs the larger bounds (every operation may also raise).

.PHONY: model-check-deep

model-check-deep:
	MINTID_MODEL_DEPTH=deep $(CARGO) test -p mintid --test model_check -- --nocapture
