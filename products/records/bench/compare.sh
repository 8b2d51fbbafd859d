#!/usr/bin/env bash
# compare.sh N: make bench-records-pocketbase. Gatehouse beside PocketBase v0.40.4 (make
# pocketbase) on the same N posts and 10,000 authors (recordsbench -ndjson), one server after
# the other on the same machine in one run, each on a fresh folder with its shipped defaults:
# the import (Gatehouse: `gatehouse records import`, one command a file; PocketBase: its batch
# API through pbload, 1,000 records a request, two in flight), the read mixes (a)-(e) of
# compare.lua and (f) creates, each driven by wrk from another process
# (COMPARE_DURATION, 10s; 16 connections). Prints each figure for both servers, their ratio
# (Gatehouse / PocketBase) and each server's VmHWM after each phase. COMPARE_DIR is the work
# folder (the NDJSON kept for the next run), COMPARE_MIXES the mixes (a b c d e f).
set -euo pipefail
n=${1:-100000}
dur=${COMPARE_DURATION:-10s} mixes=${COMPARE_MIXES:-a b c d e f}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
work=${COMPARE_DIR:-$root/.bench/compare-$n}
. "$here/lib.sh"
need_wrk
go build -o "$root/bin/gatehouse" "$root/edge/cmd/gatehouse"
go build -o "$root/bin/pbload" "$here/pbload"
make -s -C "$root" pocketbase
mkdir -p "$work"
[ -s "$work/nd/posts.ndjson" ] || go run "$root/products/records/cmd/recordsbench" -n "$n" -authors 10000 -ndjson "$work/nd"
rm -rf "$work/gh" "$work/pb"
declare -A res
pid=
stop() { [ -n "$pid" ] && { kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null || true; }; pid=; }
trap stop EXIT
# load TARGET MIX URL TOKEN: one wrk run; stores "rate p50 p99 errors" in res[TARGET-MIX].
load() {
  local out
  out=$(TARGET=$1 MIX=$2 N=$n TOKEN=$4 wrk -t2 -c16 -d"$dur" --latency -s "$here/compare.lua" "$3")
  read -r _ rate p50 p99 bad <<<"$(grep '^RESULT' <<<"$out")"
  res[$1-$2]="$rate $p50 $p99 $bad $(hwm $pid)"
}
echo "bench-records-pocketbase: $n posts + 10000 authors, $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"

port=$(free_port) url=http://127.0.0.1:$port token=bench-compare-admin-token
mkdir -p "$work/gh"
printf 'listen: "127.0.0.1:%s"\npublic_url: "%s"\nadmin_token: "%s"\nlog_level: warn\n' "$port" "$url" "$token" > "$work/gh/gatehouse.yaml"
"$root/bin/gatehouse" serve --data "$work/gh/data" --config "$work/gh/gatehouse.yaml" --tenants "$work/nd/tenants.yaml" >"$work/gh/serve.log" 2>&1 &
pid=$!
wait_up $pid "$url/readyz" "$work/gh/serve.log"
t0=$(date +%s.%N)
for c in authors posts; do
  "$root/bin/gatehouse" records import "$work/nd/$c.ndjson" --project bench --collection $c --server "$url" --token "$token" >/dev/null
done
t1=$(date +%s.%N)
res[gatehouse-import]="$(awk -v l="$((n + 10000))" -v a="$t0" -v b="$t1" 'BEGIN {printf "%.0f", l / (b - a)}') - - 0 $(hwm $pid)"
for m in $mixes; do load gatehouse "$m" "$url" "$token"; done
ghdata=$(du -sm "$work/gh/data" | cut -f1)
stop

port=$(free_port) url=http://127.0.0.1:$port
mkdir -p "$work/pb"
"$root/bin/pocketbase" superuser upsert bench@bench.test bench-password-1 --dir "$work/pb/data" >/dev/null
"$root/bin/pocketbase" serve --dir "$work/pb/data" --http "127.0.0.1:$port" >"$work/pb/serve.log" 2>&1 &
pid=$!
wait_up $pid "$url/api/health" "$work/pb/serve.log"
t0=$(date +%s.%N)
pbout=$("$root/bin/pbload" -url "$url" -nd "$work/nd")
t1=$(date +%s.%N)
pbtoken=$(awk '/^token:/ {print $2}' <<<"$pbout")
res[pocketbase-import]="$(awk -v l="$((n + 10000))" -v a="$t0" -v b="$t1" 'BEGIN {printf "%.0f", l / (b - a)}') - - 0 $(hwm $pid)"
for m in $mixes; do load pocketbase "$m" "$url" "$pbtoken"; done
pbdata=$(du -sm "$work/pb/data" | cut -f1)
stop

printf '%-8s %14s %14s %7s %16s %16s %9s\n' phase gatehouse/s pocketbase/s ratio "gh p50/p99 ms" "pb p50/p99 ms" "VmHWM gh/pb MB"
for m in import $mixes; do
  read -r gr gp50 gp99 gbad gh <<<"${res[gatehouse-$m]}"
  read -r pr pp50 pp99 pbad ph <<<"${res[pocketbase-$m]}"
  printf '%-8s %14s %14s %6.2fx %16s %16s %6s/%s' "$m" "$gr" "$pr" "$(awk -v a="$gr" -v b="$pr" 'BEGIN {print (b > 0 ? a / b : 0)}')" "$gp50/$gp99" "$pp50/$pp99" "$gh" "$ph"
  [ "$gbad$pbad" != 00 ] && printf '  (errors: gatehouse %s, pocketbase %s)' "$gbad" "$pbad"
  echo
done
echo "data folder: gatehouse ${ghdata} MB, pocketbase ${pbdata} MB"
