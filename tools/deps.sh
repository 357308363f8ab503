#!/bin/sh
# deps.sh PKG...: install the Debian packages that are missing, without asking.
# Also installs the npm packages the browser test needs (into java-test-harness/browser).
set -e
missing=""
for p in "$@"; do
    # Node.js may come from another packaging (its npm bundled): a working command counts as installed.
    case "$p" in
    nodejs) command -v node >/dev/null 2>&1 && continue ;;
    npm) command -v npm >/dev/null 2>&1 && continue ;;
    esac
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
    echo "deps: installing$missing"
    SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo -n"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null
fi
dir="$(dirname "$0")/../java-test-harness/browser"
if [ -f "$dir/package.json" ] && [ ! -d "$dir/node_modules/playwright-core" ]; then
    echo "deps: npm install in java-test-harness/browser"
    (cd "$dir" && npm install --no-audit --no-fund --silent >/dev/null)
fi
exit 0
