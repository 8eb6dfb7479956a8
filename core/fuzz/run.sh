#!/usr/bin/env bash
# Runs every fuzz target for SECONDS seconds each, two at a time, seeded from
# the shared vectors. Usage: core/fuzz/run.sh SECONDS (make fuzz-smoke / make fuzz).
#
# Built with the stable compiler and `--sanitizer none`: the core forbids
# unsafe code, so AddressSanitizer would cost build and run time and find
# nothing; cargo-fuzz keeps debug assertions and overflow checks on. A
# failing input is saved under core/fuzz/artifacts/<target>/ and fails the run.
set -euo pipefail
seconds=${1:?usage: run.sh SECONDS}
cd "$(dirname "$0")"
cargo=${CARGO:-cargo}
triple=$(rustc -vV | sed -n 's/^host: //p')
binaries=${CARGO_TARGET_DIR:-target}/$triple/release
lanes=2

python3 seed.py ../../tests/vectors corpus
"$cargo" fuzz build --sanitizer none

logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT

# One target, its output kept in a log; prints a one-line result.
run_one() {
    local target=$1 log="$logs/$1.log"
    mkdir -p "corpus/$target" "artifacts/$target"
    if "$binaries/$target" "corpus/$target" \
        -artifact_prefix="artifacts/$target/" -max_total_time="$seconds" >"$log" 2>&1; then
        echo "fuzz $target: $(grep -E '^Done' "$log" || echo 'finished')"
    else
        tail -n 40 "$log"
        echo "fuzz $target: FAILED (the input is under core/fuzz/artifacts/$target/)"
        return 1
    fi
}

failed=0
running=0
for target in $("$cargo" fuzz list); do
    if ((running == lanes)); then
        wait -n || failed=$((failed + 1))
        running=$((running - 1))
    fi
    run_one "$target" &
    running=$((running + 1))
done
while ((running > 0)); do
    wait -n || failed=$((failed + 1))
    running=$((running - 1))
done
if ((failed)); then
    echo "fuzz: $failed target(s) failed"
    exit 1
fi
echo "fuzz: every target ran ${seconds} s without a failure"
