#!/usr/bin/env bash
# Starts a throwaway PostgreSQL and a throwaway MariaDB on free loopback ports, each
# with a database `mintid` and a user `mintid` with a random password, and a Redis
# Cluster (three primaries, three replicas), and writes the connection details to
# .cache/db/db.env. Installs the Debian packages when missing
# (as root). Idempotent: when both servers already run, it only says so.
set -euo pipefail
# shellcheck source=scripts/db/lib.sh
. "$(dirname "$0")/lib.sh"

started=$(date +%s%N)
mkdir -p "$DB_STATE_DIR"
exec 9>"$DB_STATE_DIR/lock"
flock 9

if [ -f "$DB_STATE_FILE" ]; then
  # shellcheck disable=SC1090  # written by up.sh
  . "$DB_STATE_FILE"
  if pg_alive && mysql_alive && redis_alive && proxy_alive; then
    db_log "already running (PostgreSQL on $PG_PORT, MariaDB on $MY_PORT, Redis on $REDIS_PORTS); $DB_ENV_FILE"
    exit 0
  fi
  db_log "stale state from an earlier run: cleaning up first"
  flock -u 9
  "$(dirname "$0")/down.sh"
  flock 9
fi

# --- binaries ---------------------------------------------------------------

find_pg_bin() {
  local dir
  for dir in $(printf '%s\n' /usr/lib/postgresql/*/bin | sort -V -r); do
    [ -x "$dir/initdb" ] && { echo "$dir"; return; }
  done
  dir=$(pg_config --bindir 2>/dev/null || true)
  [ -n "$dir" ] && [ -x "$dir/initdb" ] && { echo "$dir"; return; }
  dir=$(command -v initdb 2>/dev/null || true)
  [ -n "$dir" ] && { dirname "$(readlink -f "$dir")"; return; }
  return 1
}

find_mariadbd() {
  command -v mariadbd 2>/dev/null || { [ -x /usr/sbin/mariadbd ] && echo /usr/sbin/mariadbd; }
}

missing=()
find_pg_bin >/dev/null || missing+=(postgresql)
{ find_mariadbd >/dev/null && command -v mariadb-install-db >/dev/null; } || missing+=(mariadb-server)
{ command -v redis-server >/dev/null && command -v redis-cli >/dev/null; } || missing+=(redis-server)
if [ ${#missing[@]} -gt 0 ]; then
  [ "$(id -u)" = 0 ] || { db_log "missing ${missing[*]}: install as root (apt-get install ${missing[*]})"; exit 1; }
  db_log "installing ${missing[*]}"
  # Keep the packages from starting their system-wide services: we start our own.
  made_policy=
  if [ ! -e /usr/sbin/policy-rc.d ]; then
    printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d
    chmod 755 /usr/sbin/policy-rc.d
    made_policy=1
  fi
  trap '[ -n "$made_policy" ] && rm -f /usr/sbin/policy-rc.d' EXIT
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  [ -n "$made_policy" ] && rm -f /usr/sbin/policy-rc.d
  trap - EXIT
fi
PG_BIN=$(find_pg_bin)
MARIADBD=$(find_mariadbd)

# --- users and directories --------------------------------------------------

if [ "$(id -u)" = 0 ]; then
  if id postgres >/dev/null 2>&1; then PG_OWNER=postgres; else
    id mintid-db >/dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin mintid-db
    PG_OWNER=mintid-db
  fi
  if id mysql >/dev/null 2>&1; then MY_OWNER=mysql; else MY_OWNER=$PG_OWNER; fi
else
  PG_OWNER=$(id -un)
  MY_OWNER=$PG_OWNER
fi

# Every port (and every Redis cluster bus port, the port + 10000) lies below the kernel's
# ephemeral range, so no client socket of another process can hold it between the check
# and the server's bind.
EPHEMERAL_FIRST=$(awk '{ print $1 }' /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || echo 32768)
[ "${EPHEMERAL_FIRST:-0}" -ge 21000 ] 2>/dev/null || EPHEMERAL_FIRST=32768
PORT_SPAN=$((EPHEMERAL_FIRST - 20000))

free_port() {
  local port
  for _ in $(seq 100); do
    port=$((10000 + RANDOM % (PORT_SPAN + 10000)))
    [ "$port" != "${1:-}" ] || continue
    (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null || { echo "$port"; return; }
  done
  return 1
}
random_password() { head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n'; }

TMP=$(mktemp -d /tmp/mintid-db.XXXXXX)
chmod 755 "$TMP"
PG_PORT=$(free_port)
MY_PORT=$(free_port "$PG_PORT")
# --- Redis Cluster ports: six, each with its cluster bus port (the port + 10000) free
# too, none another server's port ---
REDIS_PORTS=
taken=" $PG_PORT $MY_PORT "
while [ "$(wc -w <<<"$REDIS_PORTS")" -lt 6 ]; do
  port=$((10000 + RANDOM % PORT_SPAN))
  case "$taken" in *" $port "* | *" $((port + 10000)) "*) continue ;; esac
  (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && continue
  (exec 3<>"/dev/tcp/127.0.0.1/$((port + 10000))") 2>/dev/null && continue
  taken="$taken$port $((port + 10000)) "
  REDIS_PORTS="${REDIS_PORTS:+$REDIS_PORTS }$port"
done
while :; do
  FAULT_PORT=$(free_port "$PG_PORT")
  case "$taken" in *" $FAULT_PORT "*) ;; *) break ;; esac
done
MY_SOCKET="$TMP/mysql/run/mysqld.sock"
MY_PID_FILE="$TMP/mysql/run/mysqld.pid"
cat >"$DB_STATE_FILE" <<STATE
TMP=$TMP
PG_BIN=$PG_BIN
PG_OWNER=$PG_OWNER
PG_PORT=$PG_PORT
MY_PORT=$MY_PORT
MY_SOCKET=$MY_SOCKET
MY_PID_FILE=$MY_PID_FILE
REDIS_PORTS="$REDIS_PORTS"
FAULT_PORT=$FAULT_PORT
STATE
# A failure from here on stops whatever was started.
trap 'db_log "startup failed"; flock -u 9; "$(dirname "$0")/down.sh" --show-logs' ERR

# Each server gets a temporary directory of its own, writable by its user: a TMPDIR
# inherited from the caller (which MariaDB's user may not be able to write) is never used.
mkdir -p "$TMP/pg/sock" "$TMP/pg/tmp" "$TMP/mysql/run" "$TMP/mysql/tmp" "$TMP/redis" "$TMP/proxy"
chown -R "$PG_OWNER" "$TMP/pg"
chown -R "$MY_OWNER" "$TMP/mysql"
PG_PASSWORD=$(random_password)
MY_PASSWORD=$(random_password)

# --- PostgreSQL and MariaDB, set up side by side ---------------------------
# A freshly initialised data directory of each server version is kept under
# .cache/db/template and copied, which turns seconds of initdb/install-db into a copy.

# Copies the template named $1 to $2; when there is none yet, runs the command that
# follows with $2 as its last argument and keeps a copy of the result as the template.
from_template() {
  local name=$1 dest=$2; shift 2
  local template="$DB_STATE_DIR/template/$name"
  if [ -d "$template" ]; then
    cp -a "$template" "$dest"
    return
  fi
  "$@" "$dest"
  mkdir -p "$DB_STATE_DIR/template"
  rm -rf "$template.$$"
  cp -a "$dest" "$template.$$"
  mv -T "$template.$$" "$template" 2>/dev/null || rm -rf "$template.$$"
}

pg_init() {
  as_pg_owner env TMPDIR="$TMP/pg/tmp" "$PG_BIN/initdb" -D "$1" -U postgres --auth-local=trust \
    --auth-host=scram-sha-256 --encoding=UTF8 --locale=C --no-sync >"$TMP/pg/initdb.log" 2>&1
}

pg_up() {
  from_template "pg-$("$PG_BIN/postgres" --version | grep -o '[0-9][0-9.]*' | head -n 1)" "$TMP/pg/data" pg_init
  as_pg_owner env TMPDIR="$TMP/pg/tmp" "$PG_BIN/pg_ctl" start -D "$TMP/pg/data" -w -t 60 -l "$TMP/pg/log" \
    -o "-c listen_addresses=127.0.0.1 -p $PG_PORT -k $TMP/pg/sock" >/dev/null 9>&-
  as_pg_owner "$PG_BIN/psql" -h "$TMP/pg/sock" -p "$PG_PORT" -U postgres -d postgres -qX \
    -v ON_ERROR_STOP=1 -v pw="$PG_PASSWORD" >/dev/null <<'SQL'
CREATE ROLE mintid LOGIN CREATEDB PASSWORD :'pw';
CREATE DATABASE mintid OWNER mintid;
SQL
}

mysql_init() {
  TMPDIR="$TMP/mysql/tmp" mariadb-install-db --no-defaults --datadir="$1" --user="$MY_OWNER" \
    --auth-root-authentication-method=normal --skip-test-db --skip-name-resolve \
    --innodb-log-file-size=16M >"$TMP/mysql/install.log" 2>&1
}

mysql_up() {
  from_template "mariadb-$("$MARIADBD" --version | grep -o 'Ver [0-9][0-9.]*' | tr -dc '0-9.')" \
    "$TMP/mysql/data" mysql_init
  local user_opt=()
  [ "$(id -u)" = 0 ] && user_opt=(--user="$MY_OWNER")
  TMPDIR="$TMP/mysql/tmp" setsid "$MARIADBD" --no-defaults --datadir="$TMP/mysql/data" \
    --tmpdir="$TMP/mysql/tmp" --socket="$MY_SOCKET" \
    --pid-file="$MY_PID_FILE" --port="$MY_PORT" --bind-address=127.0.0.1 \
    --skip-name-resolve --innodb-log-file-size=16M --log-error="$TMP/mysql/mysqld.err" \
    "${user_opt[@]}" </dev/null >/dev/null 2>&1 9>&- &
  local pid=$!
  for _ in $(seq 600); do
    mariadb-admin --no-defaults --socket="$MY_SOCKET" -u root ping >/dev/null 2>&1 && break
    kill -0 "$pid" 2>/dev/null || { db_log "mariadbd exited during startup"; return 1; }
    sleep 0.05
  done
  mariadb --no-defaults --socket="$MY_SOCKET" -u root <<SQL
CREATE DATABASE mintid;
CREATE USER 'mintid'@'%' IDENTIFIED BY '$MY_PASSWORD';
GRANT ALL PRIVILEGES ON \`mintid%\`.* TO 'mintid'@'%';
SQL
}

# --- the fault proxy ----------------------------------------------------------
# The conformance runners' real network faults (scripts/db/fault_proxy.py says how).
fault_proxy_up() {
  setsid python3 "$(dirname "$0")/fault_proxy.py" --port "$FAULT_PORT" \
    </dev/null >"$TMP/proxy/log" 2>&1 9>&- &
  echo $! >"$TMP/proxy/pid"
  for _ in $(seq 200); do
    (exec 3<>"/dev/tcp/127.0.0.1/$FAULT_PORT") 2>/dev/null && return
    kill -0 "$(cat "$TMP/proxy/pid")" 2>/dev/null || break
    sleep 0.02
  done
  db_log "the fault proxy did not start"
  return 1
}

# --- Redis Cluster -------------------------------------------------------------
# Six nodes (redis-node.sh), then `redis-cli --cluster create` gives each primary a
# third of the slots and a replica.
redis_up() {
  local port nodes=()
  for port in $REDIS_PORTS; do
    mkdir -p "$TMP/redis/$port"
    "$(dirname "$0")/redis-node.sh" "$port" "$TMP/redis/$port" 9>&-
    nodes+=("127.0.0.1:$port")
  done
  for port in $REDIS_PORTS; do
    for _ in $(seq 200); do
      redis-cli -p "$port" ping >/dev/null 2>&1 && break
      sleep 0.02
    done
  done
  redis-cli --cluster create "${nodes[@]}" --cluster-replicas 1 --cluster-yes \
    >"$TMP/redis/create.log" 2>&1 9>&-
  for port in $REDIS_PORTS; do
    for _ in $(seq 500); do
      redis-cli -p "$port" cluster info 2>/dev/null | grep -q '^cluster_state:ok' && break
      sleep 0.02
    done
    redis-cli -p "$port" cluster info | grep -q '^cluster_state:ok'
  done
}

redis_up &
redis_job=$!
pg_up &
pg_job=$!
mysql_up &
mysql_job=$!
# Wait for both before judging, so that a failure never stops one server while the
# other is still starting.
pg_status=0
mysql_status=0
redis_status=0
wait "$redis_job" || redis_status=$?
wait "$pg_job" || pg_status=$?
wait "$mysql_job" || mysql_status=$?
[ "$pg_status" = 0 ] || db_log "PostgreSQL did not start"
[ "$mysql_status" = 0 ] || db_log "MariaDB did not start"
[ "$redis_status" = 0 ] || db_log "the Redis Cluster did not start"
# One command, so that a failure stops the script here (set -e and the ERR trap above show
# the servers' logs): an `a && b && c` list whose middle test fails would carry on.
((pg_status == 0 && mysql_status == 0 && redis_status == 0))
fault_proxy_up

# --- connection details -----------------------------------------------------

cat >"$DB_ENV_FILE" <<ENV
MINTID_PG_URL=postgresql://mintid:$PG_PASSWORD@127.0.0.1:$PG_PORT/mintid
MINTID_PG_HOST=127.0.0.1
MINTID_PG_PORT=$PG_PORT
MINTID_PG_USER=mintid
MINTID_PG_PASSWORD=$PG_PASSWORD
MINTID_PG_DATABASE=mintid
MINTID_MYSQL_URL=mysql://mintid:$MY_PASSWORD@127.0.0.1:$MY_PORT/mintid
MINTID_MYSQL_HOST=127.0.0.1
MINTID_MYSQL_PORT=$MY_PORT
MINTID_MYSQL_USER=mintid
MINTID_MYSQL_PASSWORD=$MY_PASSWORD
MINTID_MYSQL_DATABASE=mintid
MINTID_FAULT_PROXY=127.0.0.1:$FAULT_PORT
MINTID_REDIS_CLUSTER=$(for port in $REDIS_PORTS; do printf '127.0.0.1:%s,' "$port"; done | sed 's/,$//')
ENV
trap - ERR
elapsed=$(( ($(date +%s%N) - started) / 1000000 ))
db_log "PostgreSQL on 127.0.0.1:$PG_PORT, MariaDB on 127.0.0.1:$MY_PORT, Redis Cluster on ${REDIS_PORTS// /,}, fault proxy on $FAULT_PORT, up in ${elapsed} ms; $DB_ENV_FILE"
