#!/bin/sh
# Real-browser test of the HTML flame graph (make browser-test): headless Debian Chromium driven by
# playwright-core. Needs build/jsampler (for `jsampler convert`), node and /usr/bin/chromium.
#
#   sh java-test-harness/browser/run.sh
#
# JSAMPLER_CLI overrides the CLI; JSAMPLER_HTML names an agent-written page to check as well.
set -eu

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
JSAMPLER_CLI=${JSAMPLER_CLI:-$ROOT/build/jsampler}
export JSAMPLER_CLI

if [ ! -x /usr/bin/chromium ]; then
    echo "browser-test: FAILED: /usr/bin/chromium is missing (make deps installs it)"
    exit 1
fi
if ! command -v node >/dev/null 2>&1; then
    echo "browser-test: FAILED: node is missing (make deps installs nodejs)"
    exit 1
fi
if [ ! -x "$JSAMPLER_CLI" ]; then
    echo "browser-test: FAILED: $JSAMPLER_CLI is not built (run make)"
    exit 1
fi
if [ ! -d "$HERE/node_modules/playwright-core" ]; then
    echo "browser-test: npm install (playwright-core)"
    (cd "$HERE" && npm install --no-audit --no-fund --silent)
fi

# Prints one line per check and ends with "N passed, N failed"; exits non-zero if any check failed.
exec node "$HERE/flamegraph.test.mjs"
