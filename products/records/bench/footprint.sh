#!/usr/bin/env bash
# footprint.sh N: make bench-footprint. The memory and disk footprint of the real server over a
# whole run with the shipped defaults: a fresh data folder, the import of N posts and 10,000
# authors (recordsbench -ndjson files, through `gatehouse records import`), the five read mixes
# of mixes.lua, then durable record creates (writes.lua), each driven by wrk from another
# process. A sampler reads the server's /proc/PID/status every 200 ms; the script prints, per
# phase, its rate, the peak VmRSS (anonymous + file-backed) and VmHWM, then the data folder's
# size and the ten top holders of a heap profile taken at the highest RSS seen (the server runs
# with debug_listen on loopback for it). FOOTPRINT_DURATION (10s) is each mix's load,
# FOOTPRINT_CREATES (30s) the creates', FOOTPRINT_CHUNK (0: the whole file in one command)
# the lines per import command, FOOTPRINT_DIR the work folder (files kept for the next run),
# FOOTPRINT_CONFIG extra YAML lines for the server's config (e.g. "memory_limit_mb: 300").
# FOOTPRINT_CGROUP_MB runs the server in a cgroup of that many MB (root; cgroup v2 or v1).
set -euo pipefail
n=${1:-1000000}
dur=${FOOTPRINT_DURATION:-10s} creates=${FOOTPRINT_CREATES:-30s} chunk=${FOOTPRINT_CHUNK:-0}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
work=${FOOTPRINT_DIR:-$root/.bench/footprint-$n}
. "$here/lib.sh"
need_wrk
go build -o "$root/bin/gatehouse" "$root/edge/cmd/gatehouse"
mkdir -p "$work"
[ -s "$work/nd/posts.ndjson" ] || go run "$root/products/records/cmd/recordsbench" -n "$n" -authors 10000 -ndjson "$work/nd"
rm -rf "$work/data" "$work/samples" "$work"/heap-*.pb.gz "$work/parts"
port=$(free_port) dport=$(free_port)
url=http://127.0.0.1:$port token=bench-footprint-admin-token
{
  printf 'listen: "127.0.0.1:%s"\npublic_url: "%s"\nadmin_token: "%s"\nlog_level: warn\ndebug_listen: "127.0.0.1:%s"\n' "$port" "$url" "$token" "$dport"
  [ -n "${FOOTPRINT_CONFIG:-}" ] && printf '%s\n' "$FOOTPRINT_CONFIG"
} > "$work/gatehouse.yaml"
pid= sampler=
stop() {
  [ -n "$sampler" ] && { kill "$sampler" 2>/dev/null; wait "$sampler" 2>/dev/null || true; }
  [ -n "$pid" ] && { kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null || true; }
  sampler= pid=
  [ -n "$cg" ] && { rmdir "$cg" 2>/dev/null || true; }
}
trap stop EXIT
serve=("$root/bin/gatehouse" serve --data "$work/data" --config "$work/gatehouse.yaml" --tenants "$work/nd/tenants.yaml")
cg=
if [ -n "${FOOTPRINT_CGROUP_MB:-}" ]; then
  # The server runs in a cgroup of its own limited to FOOTPRINT_CGROUP_MB (v2 memory.max, else
  # v1 memory.limit_in_bytes), joined before it execs, with nothing configured: its budget
  # derives from the limit. The run ends with the cgroup's OOM kills and the server's state.
  if grep -qw memory /sys/fs/cgroup/cgroup.controllers 2>/dev/null; then
    cg=/sys/fs/cgroup/bench-footprint-$$ limitfile=memory.max
  else
    cg=/sys/fs/cgroup/memory/bench-footprint-$$ limitfile=memory.limit_in_bytes
  fi
  mkdir "$cg" && echo $((FOOTPRINT_CGROUP_MB << 20)) > "$cg/$limitfile"
  sh -c 'echo $$ > "$0/cgroup.procs" && exec "$@"' "$cg" "${serve[@]}" >"$work/serve.log" 2>&1 &
else
  "${serve[@]}" >"$work/serve.log" 2>&1 &
fi
pid=$!
wait_up $pid "$url/readyz" "$work/serve.log"
budget=$(curl -fs "$url/metrics" | awk -F'[{}" ]' '/^gatehouse_memory_budget_bytes/ {printf "%s (%d MB)", $3, $6/1048576}')
echo "bench-footprint: $n posts + 10000 authors, $(nproc) cores (shared), memory budget: $budget"
echo start > "$work/phase"
# The sampler: every 200 ms a line "phase VmRSS VmHWM RssAnon RssFile" (kB); at each new high of
# VmRSS (8 MB past the last), a heap profile, so the last one is taken at the peak.
(
  top=0
  while kill -0 $pid 2>/dev/null; do
    s=$(awk '/^VmRSS|^VmHWM|^RssAnon|^RssFile/ {v[$1]=$2} END {print v["VmRSS:"], v["VmHWM:"], v["RssAnon:"], v["RssFile:"]}' "/proc/$pid/status" 2>/dev/null) || break
    echo "$(cat "$work/phase") $s" >> "$work/samples"
    rss=${s%% *}
    if [ "$rss" -gt $((top + 8192)) ]; then
      top=$rss
      curl -fs -m 5 -o "$work/heap-new.pb.gz" "http://127.0.0.1:$dport/debug/pprof/heap" && mv "$work/heap-new.pb.gz" "$work/heap-peak.pb.gz"
    fi
    sleep 0.2
  done
) &
sampler=$!
# peak PHASE: the phase's highest VmRSS with its split, and VmHWM at its end, in MB.
peak() {
  awk -v p="$1" '$1 == p && $2 > m {m = $2; a = $4; f = $5} $1 == p {h = $3} END {printf "peak VmRSS %d MB (anon %d + file %d), VmHWM %d MB", m/1024, a/1024, f/1024, h/1024}' "$work/samples"
}
import() { # file collection
  local t0 t1 lines
  lines=$(wc -l < "$1")
  t0=$(date +%s.%N)
  if [ "$chunk" -gt 0 ]; then
    mkdir -p "$work/parts"; rm -f "$work/parts"/*
    split -l "$chunk" "$1" "$work/parts/$2."
    for f in "$work/parts/$2".*; do
      "$root/bin/gatehouse" records import "$f" --project bench --collection "$2" --server "$url" --token "$token" >/dev/null
    done
  else
    "$root/bin/gatehouse" records import "$1" --project bench --collection "$2" --server "$url" --token "$token" >/dev/null
  fi
  t1=$(date +%s.%N)
  awk -v l="$lines" -v a="$t0" -v b="$t1" 'BEGIN {printf "%d lines in %.1f s (%.0f lines/s)", l, b - a, l / (b - a)}'
}
echo import > "$work/phase"
ia=$(import "$work/nd/authors.ndjson" authors)
ip=$(import "$work/nd/posts.ndjson" posts)
sleep 0.5
echo "import: authors $ia; posts $ip"
echo "  $(peak import)"
for m in a b c d e; do
  echo "mix-$m" > "$work/phase"
  out=$(MIX=$m N=$n wrk -t2 -c16 -d"$dur" --latency -s "$here/mixes.lua" "$url")
  sleep 0.5
  echo "mix ($m): $(grep 'Requests/sec' <<<"$out" | awk '{print $2}') req/s, p50 $(grep ' 50%' <<<"$out" | awk '{print $2}'), non-2xx: $(grep 'Non-2xx' <<<"$out" | awk '{print $NF}' || true)"
  echo "  $(peak "mix-$m")"
done
echo creates > "$work/phase"
out=$(MODE=records ADMIN_TOKEN=$token wrk -t2 -c16 -d"$creates" --latency -s "$here/writes.lua" "$url")
sleep 0.5
read -r _ rps p50 p99 <<<"$(grep '^RESULT' <<<"$out")"
echo "durable creates: $rps acknowledged/s, p50 $p50 ms, p99 $p99 ms, $(grep '^STATUS' <<<"$out" | cut -d' ' -f2-)"
echo "  $(peak creates)"
if [ -n "$cg" ]; then
  kill -0 $pid 2>/dev/null && state="still serving" || state="GONE"
  # v2: memory.events and memory.peak; v1: memory.oom_control and memory.max_usage_in_bytes.
  # One of each pair is missing (v1 or v2): the reads must not end the script (set -e, pipefail).
  kills=$( { awk '/^oom_kill / {print $2}' "$cg/memory.events" "$cg/memory.oom_control" 2>/dev/null || true; } | head -1)
  top=$( { cat "$cg/memory.peak" "$cg/memory.max_usage_in_bytes" 2>/dev/null || true; } | head -1)
  echo "cgroup ${FOOTPRINT_CGROUP_MB} MB: server $state, oom_kill ${kills:-unknown}, peak charge $(( ${top:-0} >> 20 )) MB (anonymous memory and the page cache it charged)"
fi
echo "whole run: $(awk '$3 > h {h = $3} END {printf "VmHWM %d MB", h/1024}' "$work/samples")"
echo "data folder: $(du -sm "$work/data" | cut -f1) MB ($(du -sm "$work/data/db" | cut -f1) MB store, $(du -sm "$work/data/title.bleve" | cut -f1) MB title index)"
echo "heap profile at the peak (inuse_space), top ten:"
go tool pprof -top -inuse_space "$root/bin/gatehouse" "$work/heap-peak.pb.gz" 2>/dev/null | sed -n '/flat%/,+10p'
