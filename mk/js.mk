# The npm package `mintid` (js/) over the wasm build of the core (bindings/wasm).
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
# Release profile for the wasm build only: fat LTO shrinks the module.
WASM_PROFILE := CARGO_PROFILE_RELEASE_LTO=fat CARGO_PROFILE_RELEASE_CODEGEN_UNITS=1

setup-js:
	@rustup target list --installed | grep -qx $(WASM_TARGET) || rustup target add $(WASM_TARGET)
	@$(WASM_BINDGEN) --version 2>/dev/null | grep -qx "wasm-bindgen $(WASM_BINDGEN_VERSION)" \
	  || $(CARGO) install wasm-bindgen-cli --version $(WASM_BINDGEN_VERSION)
	@[ -x /usr/bin/chromium ] || { apt-get update && apt-get install -y chromium; }
	@[ $(JS_DIR)/node_modules/.package-lock.json -nt $(JS_DIR)/package-lock.json ] \
	  || (cd $(JS_DIR) && npm ci --no-audit --no-fund)

js-build: setup-js
	$(WASM_PROFILE) $(CARGO) build -p mintid-wasm --target $(WASM_TARGET) --release
	rm -rf $(JS_DIR)/wasm $(JS_DIR)/dist
	$(WASM_BINDGEN) target/$(WASM_TARGET)/release/mintid_wasm.wasm --target web --out-dir $(JS_DIR)/wasm
	$(JS_BIN)/wasm-opt -Oz $(JS_DIR)/wasm/mintid_wasm_bg.wasm -o $(JS_DIR)/wasm/mintid_wasm_bg.wasm
	$(JS_BIN)/tsc -p $(JS_DIR)
	MINTID_SIZE_BUDGET=warn node $(JS_DIR)/scripts/size.mjs

test-js: js-build
	cd $(JS_DIR) && node --test test/*.test.mjs

bench-js: js-build
	cd $(JS_DIR) && node bench/ids.mjs
