# The checkout demo (examples/checkout): `make demo` serves it, `make test-demo`
# drives it in headless Chromium on SQLite and PostgreSQL.
#
# demo-venv: the mintid wheel and the demo's driver in a venv of its own.

DEMO_DIR := examples/checkout
# Recursive: PY_VENVS comes from mk/python.mk, read after this file.
DEMO_VENV = $(PY_VENVS)/demo
DEMO_PORT ?= 8000

.PHONY: demo-venv demo-serve test-demo

TEST_TARGETS += test-demo

demo-venv: python-wheel
	$(call py_fresh_venv,$(DEMO_VENV),$(DEMO_DIR)/requirements.txt)

# Serves until Ctrl-C; `make demo` runs it after the CLI demo.
demo-serve: demo-venv js-build
	@echo
	@echo "The checkout demo: open http://127.0.0.1:$(DEMO_PORT)/ (log in as bob: /?user=bob)."
	@echo "Try: double-click 'Place order' (one order, the duplicate is a replay);"
	@echo "     'Resend last request' (replayed: Idempotent-Replayed: true);"
	@echo "     'Tamper with the last ID' (400 problem+json, nothing placed)."
	@echo "SQLite in $(DEMO_DIR)/checkout.sqlite3; set MINTID_DATABASE_URL for PostgreSQL. Ctrl-C stops it."
	$(DEMO_VENV)/bin/python $(DEMO_DIR)/server.py --port $(DEMO_PORT)

# The server is linted with the Python package's settings.
test-demo: demo-venv js-build
	cd python && ../$(PY_BUILD_VENV)/bin/ruff check ../$(DEMO_DIR) && ../$(PY_BUILD_VENV)/bin/ruff format --check ../$(DEMO_DIR)
	cd $(DEMO_DIR) && MINTID_DEMO_PYTHON=$(CURDIR)/$(DEMO_VENV)/bin/python node --test test/*.test.mjs
