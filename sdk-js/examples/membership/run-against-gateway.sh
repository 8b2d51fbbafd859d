#!/usr/bin/env bash
# Runs browser.test.mjs against a real gateway started here:
#   bash sdk-js/examples/membership/run-against-gateway.sh [path/to/gatehouse]
# Starts `gatehouse serve` on 127.0.0.1:<free port> with an empty config, a throw-away data
# folder and tenants.browser-test.yaml, waits for /readyz, runs the test, stops the gateway.
# Needs: a built sdk-js (npm ci && npm run build) and Debian's chromium (installed here
# with apt-get when missing and we are root). Exit code and summary line are the test's.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../../.." && pwd)"
bin="${1:-$repo/bin/gatehouse}"
[ -x "$bin" ] || { echo "run-against-gateway: no gatehouse binary at $bin (make build)" >&2; exit 2; }

. "$here/../../scripts/browser-test-lib.sh"
ensure_chromium "run-against-gateway"

port="$(node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')"
data="$(mktemp -d)"
log="$data/gatehouse.log"
# An empty config of our own: the test must not depend on configs/gatehouse.yaml.
printf '{}\n' >"$data/gatehouse.yaml"
"$bin" serve --config "$data/gatehouse.yaml" --listen "127.0.0.1:$port" --data "$data/data" --tenants "$here/tenants.browser-test.yaml" >"$log" 2>&1 &
gw=$!
cleanup() { kill "$gw" 2>/dev/null || true; wait "$gw" 2>/dev/null || true; rm -rf "$data"; }
trap cleanup EXIT

url="http://127.0.0.1:$port"
wait_ready "run-against-gateway" "$url" "$gw" "$log"

set +e
GATEHOUSE_URL="$url" \
GATEHOUSE_MEMBERSHIP_KEY_ACTIVE=pk_test_sdk_browser_active \
GATEHOUSE_MEMBERSHIP_KEY_NO_CONNECTION=pk_test_sdk_browser_none \
GATEHOUSE_MEMBERSHIP_EXPECT_DOMAIN=clerk.example.com \
  node "$here/browser.test.mjs"
rc=$?
set -e
[ "$rc" = 0 ] || { echo "--- gatehouse log ---" >&2; tail -n 40 "$log" >&2; }
exit "$rc"
