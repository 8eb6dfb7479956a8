#!/usr/bin/env bash
# Stops the throwaway servers that up.sh started and removes their directories.
# Safe to run when nothing runs. `--show-logs` prints the servers' logs first.
set -euo pipefail
# shellcheck source=scripts/db/lib.sh
. "$(dirname "$0")/lib.sh"

mkdir -p "$DB_STATE_DIR"
exec 9>"$DB_STATE_DIR/lock"
flock 9
if [ ! -f "$DB_STATE_FILE" ]; then
  db_log "nothing to stop"
  exit 0
fi
# shellcheck disable=SC1090  # written by up.sh
. "$DB_STATE_FILE"

if [ "${1:-}" = --show-logs ]; then
  for log in "$TMP"/pg/initdb.log "$TMP"/pg/log "$TMP"/mysql/install.log "$TMP"/mysql/mysqld.err \
    "$TMP"/redis/create.log "$TMP"/redis/*/log "$TMP"/proxy/log; do
    [ -f "$log" ] && { echo "--- $log" >&2; tail -n 30 "$log" >&2; }
  done
fi

# The data is thrown away, so neither server needs a clean shutdown.
if pg_alive; then
  as_pg_owner "$PG_BIN/pg_ctl" stop -D "$TMP/pg/data" -m immediate -w -t 60 >/dev/null
fi
if mysql_alive; then
  pid=$(cat "$MY_PID_FILE")
  kill -KILL "$pid"
  while kill -0 "$pid" 2>/dev/null; do sleep 0.05; done
fi
if proxy_alive; then
  kill -TERM "$(cat "$TMP/proxy/pid")" 2>/dev/null || true
fi
for port in ${REDIS_PORTS:-}; do
  pid_file="$TMP/redis/$port/pid"
  [ -f "$pid_file" ] || continue
  pid=$(cat "$pid_file")
  kill -KILL "$pid" 2>/dev/null || continue
  # Gone, or a zombie (its sockets closed) that nobody has reaped yet.
  while kill -0 "$pid" 2>/dev/null && ! grep -q '^State:.*Z' "/proc/$pid/status" 2>/dev/null; do
    sleep 0.02
  done
done
case "$TMP" in
  /tmp/mintid-db.*) rm -rf "$TMP" ;;
esac
rm -f "$DB_STATE_FILE" "$DB_ENV_FILE"
db_log "stopped"
