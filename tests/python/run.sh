#!/usr/bin/env bash
# Runs the Python control-socket client tests against rclick. The binary is
# $RCLICK, else target/release/rclick, else target/debug/rclick. Prints one
# result line; exits 0 when every test passed.
set -uo pipefail
cd "$(dirname "$0")/../.."
if [ -z "${RCLICK:-}" ]; then
    for b in target/release/rclick target/debug/rclick; do
        if [ -x "$b" ]; then RCLICK="$PWD/$b"; break; fi
    done
fi
if [ -z "${RCLICK:-}" ] || [ ! -x "$RCLICK" ]; then
    echo "python control tests: FAILED (no rclick binary; set RCLICK)"
    exit 1
fi
export RCLICK
log=$(mktemp)
if timeout 60 python3 tests/python/test_control.py >"$log" 2>&1; then
    n=$(grep -Eo '^Ran [0-9]+' "$log" | grep -Eo '[0-9]+')
    echo "python control tests: ${n:-?} passed"
    rm -f "$log"
    exit 0
fi
cat "$log"
echo "python control tests: FAILED"
rm -f "$log"
exit 1
