# Docs are tests, and the tooling around them (issue 15).
#
# test-docs     every code block of the READMEs and the guide: scripts/docs/blocks.py checks
#               the markers and the shell blocks and runs the CLI taste; the python, js, sql
#               and Kotlin/Java blocks run in their languages' suites (python/tests/test_docs.py,
#               js/test/docs.test.mjs and browser.test.mjs, tests/schema/test_docs.py,
#               kotlin/src/test/*/io/mintid/docs), on the wheel, npm package and jar those build;
#               the README's Rust block is core/examples/quickstart.rs, run here, and
#               rust/store/README.md is the crate's doctest.
# test-vectors  the generators under tests/vectors/generators print every vector file again;
#               a difference fails (the vectors cannot drift from their independent models).
# doc-rust      rustdoc of the workspace, warnings as errors (not the CLI's binary: its docs
#               would overwrite the core's, both named `mintid`; it has no public items).
# lint-js       Biome (lint + format check) on the TypeScript layer (js/biome.json).
# lint-kotlin   ktlint on kotlin/ (kotlin/.editorconfig).

VECTORS_VENV := .cache/venv-vectors

.PHONY: test-docs test-vectors doc-rust lint-js lint-kotlin fmt-js fmt-kotlin

TEST_TARGETS += test-docs test-vectors doc-rust

# The README's Rust block (a fragment of core/examples/quickstart.rs) runs as the workspace's
# tests build it (RUST_TEST, Makefile), not as `cargo run -p mintid`, which builds the core again.
test-docs: cross-cli
	python3 scripts/docs/blocks.py
	$(RUST_TEST) --no-run
	target/debug/examples/quickstart

$(VECTORS_VENV)/installed: tests/vectors/generators/requirements.txt
	rm -rf $(VECTORS_VENV)
	python3 -m venv $(VECTORS_VENV)
	$(VECTORS_VENV)/bin/pip install --quiet --disable-pip-version-check -r $<
	touch $@

test-vectors: $(VECTORS_VENV)/installed
	@for generator in tests/vectors/generators/*.py; do \
	  name=$$(basename $$generator .py); \
	  $(VECTORS_VENV)/bin/python $$generator | cmp -s - tests/vectors/$$name.json \
	    || { echo "tests/vectors/$$name.json differs from what $$generator prints"; exit 1; }; \
	done
	@for generator in tests/vectors/generators/receiving/*.py; do \
	  name=$$(basename $$generator .py); \
	  $(VECTORS_VENV)/bin/python $$generator | cmp -s - tests/vectors/receiving/$$name.json \
	    || { echo "tests/vectors/receiving/$$name.json differs from what $$generator prints"; exit 1; }; \
	done
	@echo "vectors: every file is what its generator prints"

doc-rust: setup-rust
	RUSTDOCFLAGS="-D warnings" $(CARGO) doc --workspace --no-deps --exclude mintid-cli

lint: lint-js lint-kotlin

lint-js: setup-js
	cd $(JS_DIR) && node_modules/.bin/biome ci --colors=off --reporter=summary .

lint-kotlin:
	$(MVN) $(MVN_FLAGS) -q -f kotlin/pom.xml ktlint:check

fmt: fmt-js fmt-kotlin

fmt-js:
	cd $(JS_DIR) && node_modules/.bin/biome check --write .

fmt-kotlin:
	$(MVN) $(MVN_FLAGS) -q -f kotlin/pom.xml ktlint:format
