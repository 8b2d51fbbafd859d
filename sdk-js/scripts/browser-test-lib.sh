# Sourced by the browser-test runners (sdk-js/examples/membership and
# sdk-js/packages/forms-embed/browser): what both need around a real gateway.

# ensure_chromium WHO: makes sure Debian's chromium is there (never a browser download),
# installing it with apt-get when missing and running as root.
ensure_chromium() {
  local who="$1" path="${CHROMIUM_PATH:-/usr/bin/chromium}"
  [ -x "$path" ] && return 0
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "$who: installing Debian chromium" >&2
    apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium >/dev/null
  else
    echo "$who: $path missing (apt-get install -y chromium)" >&2
    exit 2
  fi
}

# wait_ready WHO URL PID LOG: waits up to 30 s for the gateway at URL (process PID, log LOG)
# to answer /readyz; exits 2 with the log when it dies or never gets ready.
wait_ready() {
  local who="$1" url="$2" pid="$3" log="$4"
  for _ in $(seq 1 150); do
    if curl -fsS "$url/readyz" >/dev/null 2>&1; then return 0; fi
    if ! kill -0 "$pid" 2>/dev/null; then echo "$who: gatehouse exited:" >&2; cat "$log" >&2; exit 2; fi
    sleep 0.2
  done
  echo "$who: gateway not ready at $url" >&2
  cat "$log" >&2
  exit 2
}
