#!/usr/bin/env bash
# Browser test of the live view (`rclick --http`): headless Chromium loads
# the page from a router with traffic and checks the graph, the push/pull
# port fills, live counters and handler writes from the page.
#
#   tests/browser/live_view.sh            # uses target/release/rclick
#   RCLICK=path/to/rclick tests/browser/live_view.sh
#   LIVE_VIEW_SCREENSHOT=docs/live-view.png tests/browser/live_view.sh
#
# Skips (exit 0) when chromium is not installed.
set -euo pipefail
cd "$(dirname "$0")/../.."

chromium=${CHROMIUM:-$(command -v chromium || command -v chromium-browser || true)}
if [ -z "$chromium" ]; then
    echo "live view browser test: skipped (chromium is not installed; apt-get install -y chromium)"
    exit 0
fi
rclick=${RCLICK:-target/release/rclick}
if [ ! -x "$rclick" ]; then
    echo "live view browser test: no rclick binary at $rclick (cargo build --release --bins first)" >&2
    echo "live view browser test: 0 passed, 1 failed"
    exit 1
fi
args=(--rclick "$rclick" --chromium "$chromium")
if [ -n "${LIVE_VIEW_SCREENSHOT:-}" ]; then
    args+=(--screenshot "$LIVE_VIEW_SCREENSHOT")
fi
exec python3 tests/browser/live_view.py "${args[@]}"
