#!/usr/bin/env bash
# server-rss.sh DATA N [MIXES] [MEMORY_LIMIT_MB]: the memory of the real server, apart from any
# load generator. Starts `gatehouse serve` on DATA (a folder made by recordsbench -dir, N
# records), drives each mix (default "a b") with wrk from another process for 10 s, 16
# connections, and prints req/s, latency and the server's VmRSS (anonymous / file-backed)
# after each. wrk comes from Debian (apt-get install wrk).
set -euo pipefail
data=$1 n=$2 mixes=${3:-a b} limit=${4:-0}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
. "$here/lib.sh"
need_wrk
go build -o "$root/bin/gatehouse" "$root/edge/cmd/gatehouse"
cfg=$(mktemp)
trap 'kill $pid 2>/dev/null || true; wait $pid 2>/dev/null || true; rm -f "$cfg"' EXIT
printf 'listen: "127.0.0.1:18088"\nmemory_limit_mb: %s\nlog_level: warn\n' "$limit" > "$cfg"
"$root/bin/gatehouse" serve --data "$data" --config "$cfg" >/dev/null 2>&1 &
pid=$!
for _ in $(seq 1 3000); do curl -fs http://127.0.0.1:18088/readyz >/dev/null 2>&1 && break; sleep 0.1; done
rss() { awk '/^VmRSS|^RssAnon|^RssFile/ {printf "%s %d MB  ", $1, $2/1024}' "/proc/$pid/status"; echo; }
echo "after start: $(rss)"
for m in $mixes; do
  out=$(MIX=$m N=$n wrk -t2 -c16 -d10s --latency -s "$here/mixes.lua" http://127.0.0.1:18088)
  echo "mix ($m): $(grep 'Requests/sec' <<<"$out" | awk '{print $2}') req/s, p50 $(grep ' 50%' <<<"$out" | awk '{print $2}'), p99 $(grep ' 99%' <<<"$out" | awk '{print $2}'), non-2xx: $(grep -c 'Non-2xx' <<<"$out" || true)"
  echo "  server: $(rss)"
done
