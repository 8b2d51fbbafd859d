#!/usr/bin/env bash
# Runs browser.test.mjs (the dashboard in Debian's Chromium) against a real gateway started here:
#   bash sdk-js/packages/dashboard/browser/run-against-gateway.sh [path/to/gatehouse]
# Starts `gatehouse serve` on 127.0.0.1:<free port> with its own config (admin token), a
# throw-away data folder and tenants.browser-test.yaml, creates a dashboard owner of org dash-ui
# and one of other-org with `gatehouse users create` (when the binary has dashboard accounts),
# runs the test and
# stops the gateway. Screenshots land in browser/test-output/ (gitignored).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../../../.." && pwd)"
bin="${1:-$repo/bin/gatehouse}"
[ -x "$bin" ] || { echo "dashboard browser test: no gatehouse binary at $bin (make build)" >&2; exit 2; }

. "$here/../../../scripts/browser-test-lib.sh"
ensure_chromium "dashboard browser test"

port="$(node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')"
data="$(mktemp -d)"
log="$data/gatehouse.log"
token="dashboard-browser-admin-$$"
url="http://127.0.0.1:$port"
printf '{"admin_token": "%s", "public_url": "%s"}\n' "$token" "$url" >"$data/gatehouse.yaml"
"$bin" serve --config "$data/gatehouse.yaml" --listen "127.0.0.1:$port" --data "$data/data" --tenants "$here/tenants.browser-test.yaml" >"$log" 2>&1 &
gw=$!
cleanup() {
  kill "$gw" 2>/dev/null || true
  wait "$gw" 2>/dev/null || true
  rm -rf "$data"
}
trap cleanup EXIT
wait_ready "dashboard browser test" "$url" "$gw" "$log"

# The dashboard user: an owner of dash-ui. Without dashboard accounts in this binary the test
# checks what exists (the served app and its sign-in page) and reports the rest as not run.
user_email="owner@dash-ui.test"
user_password="correct horse battery staple $$"
accounts=0
if "$bin" users --help >/dev/null 2>&1; then
  printf '%s\n' "$user_password" | "$bin" users create --email "$user_email" --org dash-ui --role owner --server "$url" --token "$token" >/dev/null
  printf '%s\n' "$user_password" | "$bin" users create --email "other@other-org.test" --org other-org --role owner --server "$url" --token "$token" >/dev/null
  accounts=1
fi

mkdir -p "$here/test-output"
set +e
GATEHOUSE_URL="$url" GATEHOUSE_ADMIN_TOKEN="$token" GATEHOUSE_DASH_EMAIL="$user_email" GATEHOUSE_DASH_PASSWORD="$user_password" \
GATEHOUSE_DASH_ACCOUNTS="$accounts" GATEHOUSE_DASH_OUTPUT="$here/test-output" node "$here/browser.test.mjs"
rc=$?
set -e
[ "$rc" = 0 ] || { echo "--- gatehouse log ---" >&2; tail -n 40 "$log" >&2; }
exit "$rc"
