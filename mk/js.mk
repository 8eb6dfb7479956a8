# The npm package `mintid` (js/) over the wasm builds of the core (bindings/wasm).
# `make test-js` works on a fresh machine: it installs the wasm target, the
# matching wasm-bindgen CLI, the npm dev dependencies and Debian's chromium.

TEST_TARGETS += test-js
BENCH_TARGETS += bench-js

.PHONY: setup-js js-build test-js bench-js

JS_DIR := js
WASM_TARGET := wasm32-unknown-unknown
WASM_BINDGEN_VERSION := 0.2.130
WASM_BINDGEN := $${CARGO_HOME:-$$HOME/.cargo}/bin/wasm-bindgen
JS_BIN := $(JS_DIR)/node_modules/.bin
# better-sqlite3 (a dev dependency, for the SQLite store tests) compiles from source
# when its prebuilt binary cannot be downloaded: against the installed Node's headers
# (<prefix>/include/node), so that node-gyp does not download them either.
NODE_HEADERS := $(shell dirname "$$(dirname "$$(readlink -f "$$(command -v node)")")")
# Release profile of the wasm builds only: fat LTO, optimised for size
# (`s` for the full build, which servers run hot; `z` for the browser build).
WASM_PROFILE := CARGO_PROFILE_RELEASE_LTO=fat CARGO_PROFILE_RELEASE_CODEGEN_UNITS=1
# The full build (Node, `mintid/full`) and the small browser build (UUIDs and
# request-ID minting) keep separate target dirs so neither rebuilds the other.
WASM_FULL := target/$(WASM_TARGET)/release/mintid_wasm.wasm
WASM_BROWSER_DIR := target/wasm-browser
WASM_BROWSER := $(WASM_BROWSER_DIR)/$(WASM_TARGET)/release/mintid_wasm.wasm
WASM_FULL_FLAGS := CARGO_PROFILE_RELEASE_OPT_LEVEL=s
# wasm-opt: optimise for size until nothing changes; drop the producers and
# target-features custom sections (the names section is gone without -g).
WASM_OPT_FLAGS := -Oz --converge --strip-producers --strip-target-features
# The browser build also takes sha2's compact SHA-256 (a loop, not unrolled).
WASM_BROWSER_FLAGS := CARGO_PROFILE_RELEASE_OPT_LEVEL=z \
  CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUSTFLAGS='--cfg sha2_backend="soft" --cfg sha2_backend_soft="compact"'

setup-js:
	@rustup target list --installed | grep -qx $(WASM_TARGET) || rustup target add $(WASM_TARGET)
	@$(WASM_BINDGEN) --version 2>/dev/null | grep -qx "wasm-bindgen $(WASM_BINDGEN_VERSION)" \
	  || $(CARGO) install wasm-bindgen-cli --version $(WASM_BINDGEN_VERSION)
	@[ -x /usr/bin/chromium ] || { apt-get update && apt-get install -y chromium; }
	@[ $(JS_DIR)/node_modules/.package-lock.json -nt $(JS_DIR)/package-lock.json ] \
	  || (cd $(JS_DIR) && npm_config_nodedir=$(NODE_HEADERS) npm ci --no-audit --no-fund)

js-build: setup-js
	$(WASM_PROFILE) $(WASM_FULL_FLAGS) $(CARGO) build -p mintid-wasm --target $(WASM_TARGET) --release
	$(WASM_PROFILE) $(WASM_BROWSER_FLAGS) $(CARGO) build -p mintid-wasm --no-default-features --target $(WASM_TARGET) --release --target-dir $(WASM_BROWSER_DIR)
	rm -rf $(JS_DIR)/src/wasm $(JS_DIR)/build $(JS_DIR)/dist
	$(WASM_BINDGEN) $(WASM_FULL) --target web --out-dir $(JS_DIR)/src/wasm
	$(WASM_BINDGEN) $(WASM_BROWSER) --target web --out-dir $(JS_DIR)/build/browser
	$(JS_BIN)/wasm-opt $(WASM_OPT_FLAGS) $(JS_DIR)/src/wasm/mintid_wasm_bg.wasm -o $(JS_DIR)/src/wasm/mintid_wasm_bg.wasm
	$(JS_BIN)/wasm-opt $(WASM_OPT_FLAGS) $(JS_DIR)/build/browser/mintid_wasm_bg.wasm -o $(JS_DIR)/build/browser/mintid_wasm_bg.wasm
	$(JS_BIN)/tsc -p $(JS_DIR)
	node $(JS_DIR)/scripts/assemble.mjs

# Each test file fails after 300 s (a hang guard), but the storage conformance file after
# 600 s: it runs every scenario on SQLite, PostgreSQL and MariaDB, three of them with 32
# workers on 100 keys, and took 180 s before the wire and 214 s after it in one run each on
# this 2-core machine at load 7-8 (2026-12-03); heavier load pushed it past 300 s. Not a pool
# size nor a pause: instrumented, the concurrent-duplicates cases run no pause at all and one
# claim (+ one load per duplicate) per request; on MariaDB each key's 31 duplicates wait on the
# claimer's row lock until its commit, so 100 keys are 100 serial lock chains of durable commits
# (18 s MariaDB, 14 s PostgreSQL, 5 s SQLite for the same-transaction case at load 13).
STORE_CONFORMANCE := test/store-conformance.test.mjs

test-js: js-build
	cd $(JS_DIR) && node --test --test-timeout=300000 $(filter-out $(STORE_CONFORMANCE),$(patsubst $(JS_DIR)/%,%,$(wildcard $(JS_DIR)/test/*.test.mjs)))
	cd $(JS_DIR) && node --test --test-timeout=600000 $(STORE_CONFORMANCE)

bench-js: js-build
	cd $(JS_DIR) && node bench/ids.mjs
	cd $(JS_DIR) && ../scripts/db/with-db.sh node bench/store.mjs
