# lib.sh: what the records benchmark scripts share (sourced, not run).

# need_wrk installs Debian's wrk when it is missing (as root), else says how.
need_wrk() {
  command -v wrk >/dev/null && return 0
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    apt-get install -y wrk >/dev/null || { apt-get update >/dev/null && apt-get install -y wrk >/dev/null; }
  else
    echo "wrk is missing (apt-get install wrk)" >&2; return 1
  fi
}

# free_port prints a free loopback TCP port.
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# wait_up PID URL [LOG]: waits until URL answers 2xx, failing (with LOG printed) when PID exits.
wait_up() {
  for _ in $(seq 1 3000); do
    kill -0 "$1" 2>/dev/null || { [ -n "${3:-}" ] && cat "$3" >&2; return 1; }
    curl -fs "$2" >/dev/null 2>&1 && return 0
    sleep 0.1
  done
  return 1
}

# hwm PID prints the process's VmHWM (peak RSS) in MB.
hwm() { awk '/^VmHWM/ {printf "%d", $2/1024}' "/proc/$1/status"; }
