#!/usr/bin/env bash
# Shows the `mintid` command at work: both kinds of ID, a layout's lifetime,
# idempotency keys, payload fingerprints, and signed request IDs.
set -euo pipefail
bin=${1:-target/release/mintid}
bin="$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Prints a command line as one would type it (quoting what needs quotes).
show() {
  printf '$ mintid'
  local arg
  for arg in "$@"; do
    if [[ $arg =~ ^[A-Za-z0-9_./:,=+@-]+$ ]]; then printf ' %s' "$arg"; else printf " '%s'" "$arg"; fi
  done
  printf '\n'
}
run() { show "$@"; "$bin" "$@"; echo; }
# Runs a command that must fail, showing its error and exit status.
run_failing() {
  show "$@"
  local status=0
  "$bin" "$@" || status=$?
  if [ "$status" -eq 0 ]; then
    echo "demo: expected a failure" >&2
    exit 1
  fi
  echo "(exit status $status)"
  echo
}
section() { printf '== %s ==\n\n' "$1"; }

section "Snowflake IDs: 64-bit, time-ordered, unique per worker"
run snowflake -n 3 --worker 7
run inspect "$("$bin" snowflake --worker 7)"
run snowflake --layout twitter --datacenter 3 --worker 4 --format base32
run layout js-safe

section "UUIDv7 (RFC 9562), strictly increasing"
run uuid7 -n 3
run inspect --json 017f22e2-79b0-7cc3-98c4-dc0c0c07398f

section "Idempotency keys and payload fingerprints"
run key build order.create tenant-7 user-123 20231001_001
run key header '"8e03978e-40d5-43e8-bc93-6894a57f9324"'
payload='{"amount": 100.50, "currency": "EUR", "sent_at": "2026-11-30T10:00:00Z"}'
printf '%s\n' "$payload" >"$work/payload.json"
echo "\$ cat payload.json"
cat "$work/payload.json"
echo
cd "$work"
run fingerprint payload.json --exclude /sent_at --canonical
run fingerprint payload.json --exclude /sent_at
run key derive payment.create user-42 payload.json --exclude /sent_at

section "Request IDs a client mints offline and a server verifies"
echo "\$ mintid grant secret --key-id 1 > keys.txt    # the server's key file"
"$bin" grant secret --key-id 1 >keys.txt
echo
show grant issue --secret-file keys.txt --key-id 1 --scope user:42 --ttl 15m
grant=$("$bin" grant issue --secret-file keys.txt --key-id 1 --scope user:42 --ttl 15m)
echo "$grant"
echo
show request-id mint --grant "$grant"
id=$("$bin" request-id mint --grant "$grant")
echo "$id"
echo
run request-id verify --secret-file keys.txt --scope user:42 "$id"
echo "# the same ID, presented by another user:"
run_failing request-id verify --secret-file keys.txt --scope user:43 "$id"
echo "# one character of the ID's UUID changed:"
tampered="${id:0:20}$([ "${id:20:1}" = A ] && echo B || echo A)${id:21}"
run_failing request-id verify --secret-file keys.txt --scope user:42 "$tampered"
