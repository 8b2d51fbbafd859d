#!/usr/bin/env bash
# Runs browser.test.mjs against a real gateway started here:
#   bash sdk-js/packages/forms-embed/browser/run-against-gateway.sh [path/to/gatehouse]
# Starts `gatehouse serve` on 127.0.0.1:<free port> with an own config (admin token only), a
# throw-away data folder and tenants.browser-test.yaml, waits for /readyz, runs the test,
# stops the gateway. Needs `npm ci` in sdk-js (playwright-core) and Debian's chromium
# (installed here with apt-get when missing and we are root).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../../../.." && pwd)"
bin="${1:-$repo/bin/gatehouse}"
[ -x "$bin" ] || { echo "forms browser test: no gatehouse binary at $bin (make build)" >&2; exit 2; }

. "$here/../../../scripts/browser-test-lib.sh"
ensure_chromium "forms browser test"

port="$(node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')"
data="$(mktemp -d)"
log="$data/gatehouse.log"
token="forms-browser-admin-$$"
# A fake Turnstile siteverify for the captcha case; its port arrives on its first stdout line.
exec 3< <(node "$here/fake-siteverify.mjs")
fake=$!
read -r -t 10 vport <&3 || { echo "forms browser test: fake siteverify did not start" >&2; exit 2; }
printf '{"admin_token": "%s", "public_url": "http://127.0.0.1:%s", "egress": {"allow_private_networks": true}, "captcha": {"turnstile": {"verify_url": "http://127.0.0.1:%s/siteverify"}}}\n' \
  "$token" "$port" "$vport" >"$data/gatehouse.yaml"
"$bin" serve --config "$data/gatehouse.yaml" --listen "127.0.0.1:$port" --data "$data/data" --tenants "$here/tenants.browser-test.yaml" >"$log" 2>&1 &
gw=$!
cleanup() {
  kill "$gw" "$fake" 2>/dev/null || true
  wait "$gw" 2>/dev/null || true
  rm -rf "$data"
}
trap cleanup EXIT

url="http://127.0.0.1:$port"
wait_ready "forms browser test" "$url" "$gw" "$log"

set +e
GATEHOUSE_URL="$url" GATEHOUSE_ADMIN_TOKEN="$token" GATEHOUSE_FORMS_KEY=pk_live_forms_browser_web \
GATEHOUSE_FORMS_PROJECT=forms-browser node "$here/browser.test.mjs"
rc=$?
set -e
[ "$rc" = 0 ] || { echo "--- gatehouse log ---" >&2; tail -n 40 "$log" >&2; }
exit "$rc"
