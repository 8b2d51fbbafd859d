# Sourced by the browser-test runners: makes sure Debian's chromium is there (never a
# browser download), installing it with apt-get when missing and running as root.
# $1 names the caller in messages.
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
