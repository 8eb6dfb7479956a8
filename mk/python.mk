# Python package `mintid` (python/, uniffi crate bindings/ffi).
#
# test-python: build the wheel once (release; target/ shared with cargo), lint
# the source, install the wheel into a fresh venv, type-check and test it there.
# bench-python: the same wheel beside the peers, in one run.

PYTHON ?= python3
PY_VENVS := .venv
PY_BUILD_VENV := $(PY_VENVS)/python-build
PY_TEST_VENV := $(PY_VENVS)/python-test
PY_BENCH_VENV := $(PY_VENVS)/python-bench
PY_WHEELS := target/python-wheels
PY_BUILD_STAMP := $(PY_BUILD_VENV)/.installed
# mypy checks the installed package, so it sees the generated module's types.
PY_MYPY := --config-file python/pyproject.toml --cache-dir $(PY_TEST_VENV)/.mypy_cache
# The two cargo commands maturin runs for the wheel (maturin 1.16, `RUST_LOG=maturin=debug`
# shows them), for the Kotlin package and `make dist` to run the same and build nothing again:
# the release cdylib of mintid-ffi, target/release/libmintid_ffi.so (a plain `cargo build
# --release -p mintid-ffi` builds crate types cdylib and lib: the same unit in another
# configuration, so each build would relink the other's), and the in-crate uniffi-bindgen,
# run with feature `cli` in the dev profile (target/debug/uniffi-bindgen).
FFI_CDYLIB := $(CARGO) rustc --profile release --manifest-path bindings/ffi/Cargo.toml --lib --crate-type cdylib
FFI_BINDGEN := $(CARGO) run --quiet --manifest-path bindings/ffi/Cargo.toml --features cli --bin uniffi-bindgen --

.PHONY: test-python bench-python python-wheel python-lint

TEST_TARGETS += test-python
BENCH_TARGETS += bench-python

$(PY_BUILD_STAMP): python/requirements/build.txt
	rm -rf $(PY_BUILD_VENV)
	$(PYTHON) -m venv $(PY_BUILD_VENV)
	$(PY_BUILD_VENV)/bin/pip install --quiet --disable-pip-version-check -r $<
	touch $@

python-wheel: $(PY_BUILD_STAMP)
	rm -rf $(PY_WHEELS)
	cd python && ../$(PY_BUILD_VENV)/bin/maturin build --release --out ../$(PY_WHEELS)

python-lint: $(PY_BUILD_STAMP)
	cd python && ../$(PY_BUILD_VENV)/bin/ruff check . && ../$(PY_BUILD_VENV)/bin/ruff format --check .

# A new venv every run: proves the wheel installs and imports on its own.
define py_fresh_venv
	rm -rf $(1)
	$(PYTHON) -m venv $(1)
	$(1)/bin/pip install --quiet --disable-pip-version-check $(PY_WHEELS)/mintid-*.whl -r $(2)
	$(1)/bin/python -I -c "import mintid; print('installed', mintid.__file__)"
endef

test-python: python-lint python-wheel
	$(call py_fresh_venv,$(PY_TEST_VENV),python/requirements/test.txt)
	$(PY_TEST_VENV)/bin/mypy $(PY_MYPY) -p mintid
	$(PY_TEST_VENV)/bin/mypy $(PY_MYPY) python/tests python/bench
	$(PY_TEST_VENV)/bin/pytest -c python/pyproject.toml --rootdir python -p no:cacheprovider python/tests

bench-python: python-wheel
	$(call py_fresh_venv,$(PY_BENCH_VENV),python/requirements/bench.txt)
	cd /tmp && $(CURDIR)/$(PY_BENCH_VENV)/bin/python $(CURDIR)/python/bench/bench_ids.py --processes 3 --values 5 --quiet
	cd /tmp && $(CURDIR)/scripts/db/with-db.sh $(CURDIR)/$(PY_BENCH_VENV)/bin/python -W ignore $(CURDIR)/python/bench/bench_store.py --seconds 2 --rounds 3
	cd /tmp && $(CURDIR)/scripts/db/with-db.sh $(CURDIR)/$(PY_BENCH_VENV)/bin/python -W ignore $(CURDIR)/python/bench/bench_store_aio.py --seconds 2 --rounds 3

# The Redis fast path beside database-only replays and fresh keys (8 clients), on the
# throwaway PostgreSQL and Redis Cluster.
bench-python-fast-path: python-wheel
	$(call py_fresh_venv,$(PY_BENCH_VENV),python/requirements/bench.txt)
	cd /tmp && $(CURDIR)/scripts/db/with-db.sh $(CURDIR)/$(PY_BENCH_VENV)/bin/python -W ignore $(CURDIR)/python/bench/bench_fast_path.py --seconds 5 --rounds 3
