#!/usr/bin/env bash
# Runs a command with the throwaway servers up and their MINTID_* variables exported:
#   scripts/db/with-db.sh pytest tests/schema
# Starts the servers when they are not running and then stops them when the command
# ends, whether it passed, failed or was interrupted. Servers that were already running
# (`make db-up`, or an outer with-db.sh around `make test`) are used and left running.
set -euo pipefail
dir=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=scripts/db/lib.sh
. "$dir/lib.sh"

already_up() {
  # shellcheck disable=SC1090  # written by up.sh
  [ -f "$DB_STATE_FILE" ] && (. "$DB_STATE_FILE" && pg_alive && mysql_alive && redis_alive && proxy_alive)
}

if ! already_up; then
  trap '"$dir/down.sh"' EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM
fi
"$dir/up.sh"
set -a
# shellcheck disable=SC1090  # written by up.sh
. "$DB_ENV_FILE"
set +a
"$@"
