# shellcheck shell=bash disable=SC2034
# Shared by up.sh, down.sh and with-db.sh: where the throwaway servers keep their state.
# Sourced, not run.

DB_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
DB_STATE_DIR="$DB_ROOT/.cache/db"
# Written by up.sh: TMP (data dirs), PG_BIN, PG_OWNER, MY_PID_FILE, MY_SOCKET, REDIS_PORTS,
# FAULT_PORT.
DB_STATE_FILE="$DB_STATE_DIR/state"
# Written by up.sh, sourced by tests: MINTID_PG_URL, MINTID_MYSQL_URL and friends.
DB_ENV_FILE="$DB_STATE_DIR/db.env"

db_log() { echo "db: $*" >&2; }

# Runs a command as the unprivileged owner of the PostgreSQL data directory
# (initdb and postgres refuse to run as root), from a directory that owner can read
# (the checkout may be in root's home).
as_pg_owner() {
  if [ "$(id -u)" = 0 ]; then
    (cd / && runuser -u "$PG_OWNER" -- "$@")
  else
    "$@"
  fi
}

pg_alive() {
  [ -n "${TMP:-}" ] && [ -f "$TMP/pg/data/postmaster.pid" ] &&
    as_pg_owner "$PG_BIN/pg_ctl" status -D "$TMP/pg/data" >/dev/null 2>&1
}

mysql_alive() {
  [ -n "${MY_PID_FILE:-}" ] && [ -f "$MY_PID_FILE" ] && kill -0 "$(cat "$MY_PID_FILE")" 2>/dev/null
}

# The Redis Cluster's nodes: each one's pid file names a live process.
redis_alive() {
  [ -n "${REDIS_PORTS:-}" ] || return 1
  local port
  for port in $REDIS_PORTS; do
    [ -f "$TMP/redis/$port/pid" ] && kill -0 "$(cat "$TMP/redis/$port/pid")" 2>/dev/null || return 1
  done
}

# The fault proxy (scripts/db/fault_proxy.py) runs.
proxy_alive() {
  [ -n "${TMP:-}" ] && [ -f "$TMP/proxy/pid" ] && kill -0 "$(cat "$TMP/proxy/pid")" 2>/dev/null
}
