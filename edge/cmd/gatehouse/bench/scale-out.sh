#!/usr/bin/env bash
# scale-out.sh DATA N: bench-scale-out (issue 17). DATA is a folder made by recordsbench -dir
# (N records in the bench project). Measures, with wrk from other processes against the real
# `gatehouse serve`:
#   badger   one node on a copy of DATA (the embedded default),
#   pg1      one node on a private PostgreSQL holding the same data (gatehouse migrate),
#   pg3      three nodes on that PostgreSQL and a private Redis, wrk against each node at once,
# the records read mixes (SCALE_MIXES, default "a b": filter+sort and q) and durable record
# creates through the admin API, SCALE_DURATION (10s, in seconds) each, SCALE_CONNS (16)
# connections per node. Prints req/s, p50, p99 and non-2xx per run with what each request cost
# the shared pieces (PostgreSQL transactions and table scans, Redis commands, connections),
# what the nodes cost them idle, then the ratios pg1/badger and pg3/pg1.
# PostgreSQL (Debian's postgresql, /usr/lib/postgresql/*/bin) and redis-server run privately in
# temporary folders on free loopback ports and are stopped at the end.
set -euo pipefail
src=$1 n=$2
dur=${SCALE_DURATION:-10s} mixes=${SCALE_MIXES:-a b} conns=${SCALE_CONNS:-16}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../../.." && pwd)
rbench=$root/products/records/bench
command -v wrk >/dev/null || { echo "scale-out: wrk is missing (apt-get install wrk)" >&2; exit 1; }
command -v redis-server >/dev/null || { echo "scale-out: redis-server is missing (apt-get install redis-server)" >&2; exit 1; }
pgbin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
[ -x "$pgbin/initdb" ] || { echo "scale-out: PostgreSQL is missing (apt-get install postgresql)" >&2; exit 1; }
[ -d "$src/db" ] || { echo "scale-out: $src is not a folder made by recordsbench -dir" >&2; exit 2; }
go build -o "$root/bin/gatehouse" "$root/edge/cmd/gatehouse"
bin=$root/bin/gatehouse

work=$(mktemp -d)
pgdir=$(mktemp -d)
pids=() pgstarted= rpid=
as_pg() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
stop_nodes() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done; pids=(); }
cleanup() {
  stop_nodes
  [ -n "$rpid" ] && { kill "$rpid" 2>/dev/null; wait "$rpid" 2>/dev/null || true; }
  [ -n "$pgstarted" ] && as_pg "$pgbin/pg_ctl" -D "$pgdir/data" -m immediate stop >/dev/null 2>&1 || true
  rm -rf "$work" "$pgdir"
}
trap cleanup EXIT
port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
token=bench-scale-admin-token

# The private PostgreSQL: its own cluster, loopback only, a socket in its own folder.
[ "$(id -u)" = 0 ] && chown postgres "$pgdir"
pgport=$(port)
as_pg "$pgbin/initdb" -D "$pgdir/data" -U postgres -A trust >/dev/null
as_pg "$pgbin/pg_ctl" -D "$pgdir/data" -l "$pgdir/log" -w -o "-p $pgport -k $pgdir -c listen_addresses=127.0.0.1 -c max_connections=300" start >/dev/null
pgstarted=1
as_pg "$pgbin/createdb" -h 127.0.0.1 -p "$pgport" -U postgres bench
pgurl="postgres://postgres@127.0.0.1:$pgport/bench?sslmode=disable"
rport=$(port)
redis-server --port "$rport" --bind 127.0.0.1 --save '' --appendonly no --dir "$work" >/dev/null 2>&1 &
rpid=$!

cp -a "$src/." "$work/badger"
echo "scale-out: copying $n records into PostgreSQL (gatehouse migrate)..." >&2
"$bin" migrate --from "$work/badger" --to "$pgurl" >"$work/migrate.log" 2>&1 || { cat "$work/migrate.log" >&2; exit 1; }

# node NAME DATA PORT EXTRA-CONFIG: starts one serve and waits until it is ready.
node() {
  local name=$1 data=$2 p=$3
  mkdir -p "$data"
  printf 'listen: "127.0.0.1:%s"\npublic_url: "http://127.0.0.1:%s"\nadmin_token: "%s"\nlog_level: warn\nstorage:\n  sync_writes: true\n%s' \
    "$p" "$p" "$token" "$4" > "$work/$name.yaml"
  "$bin" serve --data "$data" --config "$work/$name.yaml" >"$work/$name.log" 2>&1 &
  pids+=($!)
  for _ in $(seq 1 3000); do
    kill -0 "${pids[-1]}" 2>/dev/null || { cat "$work/$name.log" >&2; exit 1; }
    curl -fs "http://127.0.0.1:$p/readyz" >/dev/null 2>&1 && return; sleep 0.1
  done
  echo "scale-out: $name did not become ready" >&2; exit 1
}
shared="  backend: postgres
  postgres:
    url: \"$pgurl\"
redis:
  url: \"redis://127.0.0.1:$rport/0\"
files:
  local_shared: true
"

# load KIND URL...: one wrk per URL at once, for SCALE_DURATION; prints "req/s p50 p99 non2xx"
# (req/s and non-2xx summed over the nodes, latencies the worst node's).
load() {
  local kind=$1; shift
  local i=0 outs=() wpids=()
  for u in "$@"; do
    if [ "$kind" = writes ]; then
      MODE=records ADMIN_TOKEN=$token wrk -t1 -c"$conns" -d"$dur" --latency -s "$rbench/writes.lua" "$u" >"$work/wrk.$i" 2>&1 &
    else
      MIX=$kind N=$n wrk -t1 -c"$conns" -d"$dur" --latency -s "$rbench/mixes.lua" "$u" >"$work/wrk.$i" 2>&1 &
    fi
    wpids+=($!) outs+=("$work/wrk.$i"); i=$((i + 1))
  done
  wait "${wpids[@]}"
  awk '
    function ms(v) { if (v ~ /us$/) return v / 1000; if (v ~ /ms$/) return v + 0; if (v ~ /s$/) return v * 1000; return v }
    /Requests\/sec/ { rps += $2 }
    /^RESULT/ { wr += $2 }
    /^STATUS/ { split($3, a, "="); split($4, b, "="); bad += a[2] + b[2] }
    /Non-2xx/ { bad += $NF }
    / 50%/ { v = ms($2); if (v > p50) p50 = v }
    / 99%/ { v = ms($2); if (v > p99) p99 = v }
    END { if (wr > 0) rps = wr; printf "%.0f %.2f %.2f %d\n", rps, p50, p99, bad }' "${outs[@]}"
}

# The shared services' counters, for the capacity model (docs/scale-out.md): PostgreSQL
# transactions and rows read of the bench database, Redis commands, connections to each.
pgq() { psql -X -A -t -h 127.0.0.1 -p "$pgport" -U postgres -d bench -c "$1"; }
xacts() { pgq "select xact_commit + xact_rollback from pg_stat_database where datname = 'bench'"; }
# Index and table scans of the key-value table: about one per statement that reads it (a
# point read, a batch of a range read), so "scans per request" counts round trips.
scans() { pgq "select coalesce(sum(coalesce(idx_scan, 0) + coalesce(seq_scan, 0)), 0) from pg_stat_user_tables where relname = 'gatehouse_kv'"; }
rcmds() { redis-cli -p "$rport" info stats | awk -F: '/^total_commands_processed/ { print $2 + 0 }'; }
pgconns() { pgq "select count(*) from pg_stat_activity where datname = 'bench' and pid <> pg_backend_pid()"; }

declare -A res
measure() { # SETUP URL...
  local setup=$1; shift
  for m in $mixes writes; do
    local x0 r0 s0 x1 r1 s1 conns_now
    x0=$(xacts) r0=$(rcmds) s0=$(scans)
    read -r rps p50 p99 bad <<<"$(load "$m" "$@")"
    sleep 1 # PostgreSQL's statistics reach pg_stat_* within its stats interval
    x1=$(xacts) r1=$(rcmds) s1=$(scans) conns_now=$(pgconns)
    res[$setup.$m]=$rps
    # Per request: the database's transactions and Redis's commands over wrk's answers (the
    # badger node talks to neither, so its columns show the others' idle traffic: none).
    printf '  %-6s %-7s %8s req/s  p50 %7s ms  p99 %7s ms  non-2xx %-4s  pg xact/req %s  pg scans/req %s  redis cmd/req %s  pg conns %s\n' \
      "$setup" "$m" "$rps" "$p50" "$p99" "$bad" \
      "$(awk -v a="$x0" -v b="$x1" -v r="$rps" -v d="${dur%s}" 'BEGIN { printf "%.2f", (b - a) / (r * d > 0 ? r * d : 1) }')" \
      "$(awk -v a="$s0" -v b="$s1" -v r="$rps" -v d="${dur%s}" 'BEGIN { printf "%.2f", (b - a) / (r * d > 0 ? r * d : 1) }')" \
      "$(awk -v a="$r0" -v b="$r1" -v r="$rps" -v d="${dur%s}" 'BEGIN { printf "%.2f", (b - a) / (r * d > 0 ? r * d : 1) }')" \
      "$conns_now"
  done
}
# idle SETUP: the database transactions and Redis commands per second the nodes make with no
# request at all (journal polling, queue scans, leases, subscriptions).
idle() {
  local x0 r0
  x0=$(xacts) r0=$(rcmds); sleep 10
  printf '  %-6s idle    %s pg xact/s  %s redis cmd/s  pg conns %s\n' "$1" \
    "$(awk -v a="$x0" -v b="$(xacts)" 'BEGIN { printf "%.1f", (b - a) / 10 }')" \
    "$(awk -v a="$r0" -v b="$(rcmds)" 'BEGIN { printf "%.1f", (b - a) / 10 }')" "$(pgconns)"
}

echo "bench-scale-out: $n records, mixes ($mixes) and durable record creates (writes), $dur each, $conns connections per node, $(nproc) cores (shared)"
p=$(port); node badger "$work/badger" "$p" ""
measure badger "http://127.0.0.1:$p"
stop_nodes
p=$(port); node pg0 "$work/n0" "$p" "$shared"
idle pg1
measure pg1 "http://127.0.0.1:$p"
urls=("http://127.0.0.1:$p")
for i in 1 2; do q=$(port); node "pg$i" "$work/n$i" "$q" "$shared"; urls+=("http://127.0.0.1:$q"); done
idle pg3
measure pg3 "${urls[@]}"
stop_nodes
echo "ratios:"
for m in $mixes writes; do
  awk -v m="$m" -v b="${res[badger.$m]}" -v p1="${res[pg1.$m]}" -v p3="${res[pg3.$m]}" \
    'BEGIN { printf "  %-7s pg1/badger %.2f   pg3/pg1 %.2f\n", m, p1 / (b > 0 ? b : 1), p3 / (p1 > 0 ? p1 : 1) }'
done
