# Throwaway PostgreSQL and MariaDB for the storage tests, and the SQL-level schema tests.
# A test target that needs the servers runs its command through $(WITH_DB): it starts
# them if needed, exports MINTID_PG_URL / MINTID_MYSQL_URL (see scripts/db/up.sh), and
# stops them afterwards, also when the tests fail. To share one pair of servers across
# every target: `scripts/db/with-db.sh make test`, or `make db-up` … `make db-down`.

WITH_DB := scripts/db/with-db.sh
SCHEMA_VENV := .cache/venv-schema

.PHONY: db-up db-down test-schema

db-up:
	@scripts/db/up.sh

db-down:
	@scripts/db/down.sh

$(SCHEMA_VENV)/installed: tests/schema/requirements.txt
	rm -rf $(SCHEMA_VENV)
	python3 -m venv $(SCHEMA_VENV)
	$(SCHEMA_VENV)/bin/pip install --quiet --disable-pip-version-check -r tests/schema/requirements.txt
	touch $@

# The SQL comes from the core, through the `mintid schema` command (cross-cli).
test-schema: $(SCHEMA_VENV)/installed cross-cli
	$(WITH_DB) $(SCHEMA_VENV)/bin/python -m pytest -q tests/schema

TEST_TARGETS += test-schema
