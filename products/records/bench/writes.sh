#!/usr/bin/env bash
# writes.sh DATA N: bench-records-writes. For each of its two phases, copies DATA (a folder made
# by recordsbench -dir, N records, left compacted) to a scratch folder and starts the real
# `gatehouse serve` on it with durable commits (storage.sync_writes: true, the forms rate limit
# lifted), adds 40 forms and 50 publishable keys to the bench project, then drives it with wrk
# from another process, 16 connections for 10 s: record creates through the admin API in the
# first phase, JSON form submissions in the second. Each phase has its own copy and server, so
# neither pays for compaction or indexing the other left behind. Prints acknowledged writes/s,
# p50, p99 and the status classes of each, the server CPU per write during the run and with the
# background work it left (compaction, title indexing) until the server is idle, the
# records/forms ratio, and checks the acknowledged creates against the collection's total.
# WRITES_ROUNDS (default 3) repeats the two phases, records then forms, and ends with the
# medians: on a shared 2-core machine one round's ratio moves by about ±0.06 from the next
# (measured; docs/performance.md and its git history), and alternating the phases spreads any drift of the machine over both.
# WRITES_ONLY=records (or forms) runs that phase alone, for quick A/B comparisons of one side.
set -euo pipefail
src=$1 n=$2
dur=${WRITES_DURATION:-10s}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
command -v wrk >/dev/null || { echo "writes: wrk is missing (apt-get install wrk)" >&2; exit 1; }
[ -d "$src/db" ] || { echo "writes: $src is not a folder made by recordsbench -dir" >&2; exit 2; }
go build -o "$root/bin/gatehouse" "$root/edge/cmd/gatehouse"
# The binary just written is tens of MB of dirty pages: flushed now, their writeback does not
# meet the first phase's fsyncs.
sync
work=$(mktemp -d)
pid=
stop() { [ -n "$pid" ] && { kill $pid 2>/dev/null; wait $pid 2>/dev/null; }; pid=; }
trap 'stop; rm -rf "$work"' EXIT
token=bench-writes-admin-token
{
  echo "orgs:"
  echo "  - slug: bench"
  echo "    projects:"
  echo "      - id: bench"
  echo "        keys:"
  for k in $(seq 0 49); do printf '          - {name: w%03d, value: pk_live_bench_w%03d, products: [forms]}\n' "$k" "$k"; done
  echo "        forms:"
  for f in $(seq 0 39); do
    printf '          - {slug: f%d, title: Form %d, published: true, visibility: public, captcha: false, fields: [{name: email, type: email, label: Email, required: true}, {name: message, type: textarea, label: Message, required: true, maxLength: 5000}]}\n' "$f" "$f"
  done
} > "$work/forms.tenants.yaml"
# start: a fresh copy of DATA and a server on it, ready, with the forms and keys applied.
start() {
  rm -rf "$work/data"
  cp -a "$src/." "$work/data"
  # A free port of this machine's choosing (other benchmarks may run beside this one).
  port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  url=http://127.0.0.1:$port
  cat > "$work/gatehouse.yaml" <<YAML
listen: "127.0.0.1:$port"
public_url: "$url"
admin_token: "$token"
log_level: warn
storage:
  sync_writes: true
# The interface's 60 submissions a minute per key and form would answer 429 at this rate and
# measure the limiter, not durable submissions.
forms:
  rate_per_minute: 100000000
YAML
  "$root/bin/gatehouse" serve --data "$work/data" --config "$work/gatehouse.yaml" >"$work/serve.log" 2>&1 &
  pid=$!
  for _ in $(seq 1 3000); do
    kill -0 $pid 2>/dev/null || { cat "$work/serve.log" >&2; exit 1; }
    curl -fs "$url/readyz" >/dev/null 2>&1 && break; sleep 0.1
  done
  "$root/bin/gatehouse" apply -f "$work/forms.tenants.yaml" --server "$url" --token "$token" >/dev/null
}
total() { curl -fs -H "X-API-Key: pk_live_bench_web" "$url/records/projects/bench/collections/posts/aggregate" | sed 's/[^0-9]//g'; }
# cpu: the server's CPU time so far, in ms (utime + stime of /proc/PID/stat, in clock ticks).
cpu() { awk -v hz="$(getconf CLK_TCK)" '{printf "%d", ($14 + $15) * 1000 / hz}' "/proc/$pid/stat"; }
# settle: waits until the server used under 20 ms of CPU in a second (at most 60 s), the
# background work the writes left (compaction, title indexing) being done.
settle() {
  local a b
  for _ in $(seq 1 60); do
    a=$(cpu); sleep 1; b=$(cpu)
    [ $((b - a)) -lt 20 ] && return
  done
}
run() { MODE=$1 ADMIN_TOKEN=$token wrk -t2 -c16 -d"$dur" --latency -s "$here/writes.lua" "$url"; }
# phase MODE: one phase on its own server; sets out (wrk's output), ms (CPU during the run),
# bg (CPU until settled) and, for records, before and after (the collection's totals).
phase() {
  start
  settle
  [ "$1" = records ] && before=$(total)
  local c0 c1 c2
  c0=$(cpu); out=$(run "$1"); c1=$(cpu)
  [ "$1" = records ] && after=$(total)
  settle; c2=$(cpu)
  ms=$((c1 - c0)) bg=$((c2 - c0))
  stop
}
only=${WRITES_ONLY:-}
case $only in ""|records|forms) ;; *) echo "writes: WRITES_ONLY is records or forms" >&2; exit 2 ;; esac
rounds=${WRITES_ROUNDS:-3}
[[ $rounds =~ ^[1-9][0-9]*$ ]] || { echo "writes: WRITES_ROUNDS is a number of rounds (1 or more)" >&2; exit 2; }
line() { # name output cpu-ms cpu-ms-until-settled
  read -r _ rps p50 p99 <<<"$(grep '^RESULT' <<<"$2")"
  acked=$(grep '^STATUS' <<<"$2" | sed 's/.*2xx=\([0-9]*\).*/\1/')
  per() { awk -v c="$1" -v n="$acked" 'BEGIN{printf "%.0f", c*1000/(n>0?n:1)}'; }
  echo "$1: $rps acknowledged/s, p50 ${p50} ms, p99 ${p99} ms, $(grep '^STATUS' <<<"$2" | cut -d' ' -f2-), socket errors: $(grep -c 'Socket errors' <<<"$2" || true), server CPU $(per "$3") µs per write ($(per "$4") µs with the background work until idle)"
}
rate() { grep '^RESULT' <<<"$1" | awk '{print $2}'; }
median() { # format values...
  local f=$1; shift
  tr ' ' '\n' <<<"$*" | sort -g | awk -v f="$f" '{v[NR]=$1} END{printf f, (NR%2 ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2)}'
}
echo "bench-records-writes: $n records, 16 connections, $dur each, sync_writes on, $(nproc) cores (shared), $rounds round(s)"
rs=() fs=() qs=()
for round in $(seq 1 "$rounds"); do
  [ "$rounds" -gt 1 ] && echo "round $round of $rounds"
  if [ "$only" != forms ]; then
    phase records
    line "record creates (admin API)" "$out" "$ms" "$bg"
    acked=$(grep '^STATUS' <<<"$out" | sed 's/.*2xx=\([0-9]*\).*/\1/')
    echo "published records: $before before, $after after: $((after - before)) new for $acked acknowledged creates (more when some were in flight as wrk stopped)"
    r=$(rate "$out"); rs+=("$r")
  fi
  if [ "$only" != records ]; then
    phase forms
    line "form submissions (JSON)  " "$out" "$ms" "$bg"
    f=$(rate "$out"); fs+=("$f")
  fi
  if [ -z "$only" ]; then
    q=$(awk -v r="$r" -v f="$f" 'BEGIN{printf "%.2f", r/f}'); qs+=("$q")
    echo "records/forms: $q"
  fi
done
[ "$rounds" -gt 1 ] || exit 0
parts=()
[ "$only" != forms ] && parts+=("record creates $(median %.0f "${rs[@]}")/s (rounds: ${rs[*]})")
[ "$only" != records ] && parts+=("form submissions $(median %.0f "${fs[@]}")/s (rounds: ${fs[*]})")
[ -z "$only" ] && parts+=("records/forms $(median %.2f "${qs[@]}") (rounds: ${qs[*]})")
echo "median of $rounds rounds: $(IFS=';'; echo "${parts[*]}" | sed 's/;/; /g')"
