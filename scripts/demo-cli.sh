#!/usr/bin/env bash
# Shows the `mintid` command generating and inspecting both kinds of ID.
set -euo pipefail
bin=${1:-target/release/mintid}
run() { echo "\$ mintid $*"; "$bin" "$@"; echo; }
run snowflake -n 3 --worker 7
sf=$("$bin" snowflake --worker 7)
run inspect "$sf"
run uuid7 -n 3
u=$("$bin" uuid7)
run inspect "$u"
run inspect --json "$u"
