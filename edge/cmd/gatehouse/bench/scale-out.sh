#!/usr/bin/env bash
# scale-out.sh DATA N: bench-scale-out (issue 17). DATA is a folder made by recordsbench -dir
# (N records in the bench project). Measures, with wrk from other processes against the real
# `gatehouse serve`:
#   badger   one node on a copy of DATA (the embedded default),
#   pg1      one node on a private PostgreSQL holding the same data (gatehouse migrate),
#   pg3      three nodes on that PostgreSQL and a private Redis, one wrk against each node at once,
# the records read mixes (SCALE_MIXES, default "a b": filter+sort and q) and durable record
# creates through the admin API, SCALE_DURATION (10s, in seconds) each, SCALE_CONNS (16)
# connections per node. Prints req/s, p50, p99 and non-2xx per run with what each request cost
# the shared pieces (PostgreSQL transactions and table scans, Redis commands, connections),
# what the nodes cost them idle, then the ratios pg1/badger and pg3/pg1.
#
# NODE_CPU (default 0.15) gives every gateway node the same CPU quota, in every setup: a cgroup
# v1 cpu group of its own (cpu.cfs_quota_us over a 10 ms period) and GOMAXPROCS to match, so
# that a node, not the machine, bounds what a node serves, as where each node has cores of its
# own; PostgreSQL, Redis and wrk run outside the quotas (in one cpu group of their own, so that
# the machine's other work does not starve them either). pg3/pg1 then asks whether anything the
# nodes share (the database, Redis, the journals, leases) keeps three nodes from ~3x one.
# NODE_CPU=off runs the nodes without quotas (all of them share the machine's cores). The
# quotas need a writable /sys/fs/cgroup/cpu (cgroup v1, root); without it the script says so and
# runs without quotas. Where /sys/fs/cgroup/cpuacct is writable, each run also prints the CPU
# the nodes, the database (PostgreSQL and Redis), wrk and the rest of the machine used, in
# cores, and how often the nodes hit their quota. The cgroups are removed at the end, also on
# an interruption.
# PostgreSQL (Debian's postgresql, /usr/lib/postgresql/*/bin) and redis-server run privately in
# temporary folders on free loopback ports and are stopped at the end.
set -euo pipefail
src=$1 n=$2
dur=${SCALE_DURATION:-10s} mixes=${SCALE_MIXES:-a b} conns=${SCALE_CONNS:-16}
node_cpu=${NODE_CPU:-0.15}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../../.." && pwd)
rbench=$root/products/records/bench
command -v wrk >/dev/null || { echo "scale-out: wrk is missing (apt-get install wrk)" >&2; exit 1; }
command -v redis-server >/dev/null || { echo "scale-out: redis-server is missing (apt-get install redis-server)" >&2; exit 1; }
pgbin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
[ -x "$pgbin/initdb" ] || { echo "scale-out: PostgreSQL is missing (apt-get install postgresql)" >&2; exit 1; }
[ -d "$src/db" ] || { echo "scale-out: $src is not a folder made by recordsbench -dir" >&2; exit 2; }
case $node_cpu in
  off) ;;
  *) awk -v q="$node_cpu" 'BEGIN { exit !(q + 0 >= 0.1 && q + 0 <= 64) }' ||
    { echo "scale-out: NODE_CPU=$node_cpu: want the cores of one node (0.1 to 64, e.g. 0.25) or off" >&2; exit 2; } ;;
esac
go build -o "$root/bin/gatehouse" "$root/edge/cmd/gatehouse"
bin=$root/bin/gatehouse

work=$(mktemp -d)
pgdir=$(mktemp -d)
pids=() wpids=() pgstarted= rpid= spid= cgs=()
pgrun=()
[ "$(id -u)" = 0 ] && pgrun=(runuser -u postgres --)

# Control groups. cpu: one group per node with its quota and one for the shared pieces (when
# NODE_CPU is not off); cpuacct: one group for the nodes, one for PostgreSQL and Redis, one for
# wrk, to account their CPU.
cgtag=gatehouse-scale-$$
cgcpu=/sys/fs/cgroup/cpu cgacct=/sys/fs/cgroup/cpuacct
period=10000 # µs: a short period spreads a small quota instead of bursts (the kernel's least quota is 1 ms: NODE_CPU >= 0.1)
cgmake() { mkdir "$1" 2>/dev/null && cgs+=("$1"); }
if [ "$node_cpu" != off ] && cgmake "$cgcpu/$cgtag-probe"; then
  rmdir "$cgcpu/$cgtag-probe"
elif [ "$node_cpu" != off ]; then
  echo "scale-out: cannot create cgroups in $cgcpu (cgroup v1 cpu controller, needs root): running the nodes WITHOUT a CPU quota (as NODE_CPU=off); the pg3/pg1 ratio then measures this machine's cores, not the design" >&2
  node_cpu=off
fi
acct=
if cgmake "$cgacct/$cgtag-nodes" && cgmake "$cgacct/$cgtag-db" && cgmake "$cgacct/$cgtag-wrk"; then acct=1; fi
gomaxprocs=
[ "$node_cpu" != off ] && gomaxprocs=$(awk -v q="$node_cpu" 'BEGIN { g = int(q); if (g < q) g++; print g }')
# "${incg[@]}" "DIR..." CMD...: runs CMD inside the cgroups DIR (a list, may be empty) through
# exec, so that $! of "${incg[@]}" ... & is CMD's pid.
incg=(bash -c 'for d in $1; do echo $$ >"$d/cgroup.procs"; done; shift; exec "$@"' incg)
# cgfree DIR: moves what is left in DIR to its parent and removes it. (No return inside the
# loop: bash 5 ends the whole EXIT trap on it when the trap runs from a signal's trap.)
cgfree() {
  local d=$1 p i=0
  while ! rmdir "$d" 2>/dev/null && [ $((i += 1)) -le 10 ]; do
    for p in $(cat "$d/cgroup.procs" 2>/dev/null); do echo "$p" >"$(dirname "$d")/cgroup.procs" 2>/dev/null || true; done
    sleep 0.1
  done
  [ ! -d "$d" ] || echo "scale-out: could not remove cgroup $d" >&2
}
stop_nodes() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done; pids=()
  local d; for d in "$cgcpu/$cgtag"-pg* "$cgcpu/$cgtag"-badger; do [ -d "$d" ] && cgfree "$d"; done; return 0
}
cleanup() {
  for p in "${wpids[@]}" $spid; do kill "$p" 2>/dev/null || true; done
  stop_nodes
  [ -n "$rpid" ] && { kill "$rpid" 2>/dev/null; wait "$rpid" 2>/dev/null || true; }
  [ -n "$pgstarted" ] && "${pgrun[@]}" "$pgbin/pg_ctl" -D "$pgdir/data" -m immediate stop >/dev/null 2>&1 || true
  local d; for d in "${cgs[@]}"; do [ -d "$d" ] && cgfree "$d"; done
  rm -rf "$work" "$pgdir"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
token=bench-scale-admin-token
# The groups each part runs in: its cpuacct group, and with the quotas PostgreSQL, Redis and wrk
# share one cpu group without a quota. A quota is a ceiling, not a reservation: on a machine
# busy with other work a node would get less than its quota and the run would measure the
# machine. So each node's group and the shared group weigh as $weight_tasks tasks of nice 0
# (cpu.shares), whatever the nice of their tasks: the nodes get their quota and the shared
# pieces what the nodes ask of them, and the run takes at most what the quotas allow.
weight_tasks=8
dbcg= nodecg= wrkcg= sharedcg=
if [ "$node_cpu" != off ]; then
  cgmake "$cgcpu/$cgtag-shared" || { echo "scale-out: cannot create $cgcpu/$cgtag-shared" >&2; exit 1; }
  sharedcg=$cgcpu/$cgtag-shared
  echo $((weight_tasks * 1024)) >"$sharedcg/cpu.shares"
fi
[ -n "$acct" ] && { dbcg=$cgacct/$cgtag-db nodecg=$cgacct/$cgtag-nodes wrkcg=$cgacct/$cgtag-wrk; }

# The private PostgreSQL: its own cluster, loopback only, a socket in its own folder.
[ "$(id -u)" = 0 ] && chown postgres "$pgdir"
pgport=$(port)
"${pgrun[@]}" "$pgbin/initdb" -D "$pgdir/data" -U postgres -A trust >/dev/null
"${incg[@]}" "$dbcg $sharedcg" "${pgrun[@]}" "$pgbin/pg_ctl" -D "$pgdir/data" -l "$pgdir/log" -w -o "-p $pgport -k $pgdir -c listen_addresses=127.0.0.1 -c max_connections=300" start >/dev/null
pgstarted=1
"${pgrun[@]}" "$pgbin/createdb" -h 127.0.0.1 -p "$pgport" -U postgres bench
pgurl="postgres://postgres@127.0.0.1:$pgport/bench?sslmode=disable"
rport=$(port)
"${incg[@]}" "$dbcg $sharedcg" redis-server --port "$rport" --bind 127.0.0.1 --save '' --appendonly no --dir "$work" >/dev/null 2>&1 &
rpid=$!

cp -a "$src/." "$work/badger"
echo "scale-out: copying $n records into PostgreSQL (gatehouse migrate)..." >&2
"$bin" migrate --from "$work/badger" --to "$pgurl" >"$work/migrate.log" 2>&1 || { cat "$work/migrate.log" >&2; exit 1; }

# node NAME DATA PORT EXTRA-CONFIG: starts one serve (in its own quota group when NODE_CPU is
# set) and waits until it is ready.
node() {
  local name=$1 data=$2 p=$3 dirs=$nodecg
  mkdir -p "$data"
  printf 'listen: "127.0.0.1:%s"\npublic_url: "http://127.0.0.1:%s"\nadmin_token: "%s"\nlog_level: warn\nstorage:\n  sync_writes: true\n%s' \
    "$p" "$p" "$token" "$4" > "$work/$name.yaml"
  local envs=()
  if [ "$node_cpu" != off ]; then
    cgmake "$cgcpu/$cgtag-$name" || { echo "scale-out: cannot create $cgcpu/$cgtag-$name" >&2; exit 1; }
    echo "$period" >"$cgcpu/$cgtag-$name/cpu.cfs_period_us"
    echo $((weight_tasks * 1024)) >"$cgcpu/$cgtag-$name/cpu.shares"
    awk -v q="$node_cpu" -v p="$period" 'BEGIN { printf "%d\n", q * p }' >"$cgcpu/$cgtag-$name/cpu.cfs_quota_us"
    dirs="$dirs $cgcpu/$cgtag-$name" envs=(GOMAXPROCS="$gomaxprocs")
  fi
  "${incg[@]}" "$dirs" env "${envs[@]}" "$bin" serve --data "$data" --config "$work/$name.yaml" >"$work/$name.log" 2>&1 &
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

# load KIND URL...: one wrk per URL at once, for SCALE_DURATION; prints "req/s p50 p99 non2xx
# per-node" (req/s and non-2xx summed over the nodes, latencies the worst node's, per-node the
# req/s of each node joined by /).
load() {
  local kind=$1; shift
  local i=0 outs=()
  wpids=()
  for u in "$@"; do
    if [ "$kind" = writes ]; then
      "${incg[@]}" "$wrkcg $sharedcg" env MODE=records ADMIN_TOKEN=$token wrk -t1 -c"$conns" -d"$dur" --latency -s "$rbench/writes.lua" "$u" >"$work/wrk.$i" 2>&1 &
    else
      "${incg[@]}" "$wrkcg $sharedcg" env MIX="$kind" N="$n" wrk -t1 -c"$conns" -d"$dur" --latency -s "$rbench/mixes.lua" "$u" >"$work/wrk.$i" 2>&1 &
    fi
    wpids+=($!) outs+=("$work/wrk.$i"); i=$((i + 1))
  done
  wait "${wpids[@]}"
  wpids=()
  awk '
    function ms(v) { if (v ~ /us$/) return v / 1000; if (v ~ /ms$/) return v + 0; if (v ~ /s$/) return v * 1000; return v }
    FNR == 1 { f++ }
    /Requests\/sec/ { rq[f] = $2 }
    /^RESULT/ { wr[f] = $2 }
    /^STATUS/ { split($3, a, "="); split($4, b, "="); bad += a[2] + b[2] }
    /Non-2xx/ { bad += $NF }
    / 50%/ { v = ms($2); if (v > p50) p50 = v }
    / 99%/ { v = ms($2); if (v > p99) p99 = v }
    END {
      for (i = 1; i <= f; i++) { v = (i in wr) ? wr[i] : rq[i]; rps += v; per = per (i > 1 ? "/" : "") sprintf("%.0f", v) }
      printf "%.0f %.2f %.2f %d %s\n", rps, p50, p99, bad, per
    }' "${outs[@]}"
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
# Serialization failures (and deadlocks) PostgreSQL logged: transactions a node had to retry.
serfails() { grep -c -e 'could not serialize' -e 'deadlock detected' "$pgdir/log" || true; }
# sample FILE: until killed, appends "#" and the state of every busy session of the bench
# database every 0.2 s: its wait event when it waits inside PostgreSQL (Lock:transactionid: a
# row another transaction holds; IO:WALSync: the commit's log flush), "running" when it runs
# (or waits for a core), "idle in transaction" when PostgreSQL waits for the node.
sample() {
  while :; do
    echo '#' >>"$1"
    pgq "select case when state = 'active' then coalesce(wait_event_type || ':' || wait_event, 'running') else state end from pg_stat_activity where datname = 'bench' and pid <> pg_backend_pid() and state <> 'idle'" >>"$1" 2>/dev/null || true
    sleep 0.2
  done
}
# sessions FILE: the average number of sessions in each state over the samples, busiest first.
sessions() {
  awk '/^#/ { n++; next } NF { c[$0]++ } END { for (k in c) printf "%.1f %s\n", c[k] / (n > 0 ? n : 1), k }' "$1" |
    sort -rn | head -5 | awk '{ v = $1; $1 = ""; printf "%s%s %s", (NR > 1 ? ", " : ""), substr($0, 2), v }'
}

# cpu: "seconds nodes-ns db-ns wrk-ns machine-busy-ticks throttled-periods periods", the
# counters the CPU line of a run is the difference of (zeros where cgroups are not available).
cpu() {
  local a=0 b=0 c=0 th=0 pe=0 d
  if [ -n "$acct" ]; then a=$(cat "$nodecg/cpuacct.usage") b=$(cat "$dbcg/cpuacct.usage") c=$(cat "$wrkcg/cpuacct.usage"); fi
  if [ "$node_cpu" != off ]; then
    for d in "$cgcpu/$cgtag"-*; do
      [ -f "$d/cpu.stat" ] || continue
      th=$((th + $(awk '$1 == "nr_throttled" { print $2 }' "$d/cpu.stat"))) pe=$((pe + $(awk '$1 == "nr_periods" { print $2 }' "$d/cpu.stat")))
    done
  fi
  echo "$(date +%s.%N) $a $b $c $(awk '$1 == "cpu" { print $2 + $3 + $4 + $7 + $8 + $9 }' /proc/stat) $th $pe"
}
# cpuline NODES RPS BEFORE AFTER: the cores each part used over the run (ticks of /proc/stat are
# USER_HZ, 100 a second on Linux), and the requests answered per second of node CPU.
cpuline() {
  [ -n "$acct" ] || return 0
  awk -v k="$1" -v r="$2" -v q="$node_cpu" -v b="$3" -v a="$4" -v hz="$(getconf CLK_TCK)" 'BEGIN {
    split(b, x, " "); split(a, y, " "); t = y[1] - x[1]
    nodes = (y[2] - x[2]) / 1e9 / t; db = (y[3] - x[3]) / 1e9 / t; wrk = (y[4] - x[4]) / 1e9 / t
    all = (y[5] - x[5]) / hz / t; rest = all - nodes - db - wrk; if (rest < 0) rest = 0
    quota = q == "off" ? "no quota" : sprintf("quota %.2f", k * q)
    thr = y[7] - x[7] > 0 ? sprintf(", throttled in %.0f%% of periods", 100 * (y[6] - x[6]) / (y[7] - x[7])) : ""
    printf "           cpu (cores): nodes %.2f (%s%s)  PostgreSQL+Redis %.2f  wrk %.2f  rest of the machine %.2f;  %.0f req/s per node core\n", nodes, quota, thr, db, wrk, rest, r / (nodes > 0 ? nodes : 1)
    if (q != "off" && nodes < 0.8 * k * q) printf "           (the nodes used less than 80%% of their quota: they waited for something else than their CPU)\n"
  }'
}

declare -A res
measure() { # SETUP URL...
  local setup=$1; shift
  for m in $mixes writes; do
    local x0 r0 s0 b0 x1 r1 s1 b1 c0 c1 conns_now per
    x0=$(xacts) r0=$(rcmds) s0=$(scans) b0=$(serfails) c0=$(cpu)
    : >"$work/sessions"
    [ "$setup" = badger ] || { sample "$work/sessions" & spid=$!; }
    read -r rps p50 p99 bad per <<<"$(load "$m" "$@")"
    c1=$(cpu)
    [ -z "$spid" ] || { kill "$spid"; wait "$spid" 2>/dev/null || true; spid=; }
    sleep 1 # PostgreSQL's statistics reach pg_stat_* within its stats interval
    x1=$(xacts) r1=$(rcmds) s1=$(scans) b1=$(serfails) conns_now=$(pgconns)
    res[$setup.$m]=$rps
    res[$setup.$m.core]=$(awk -v r="$rps" -v b="$c0" -v a="$c1" 'BEGIN { split(b, x, " "); split(a, y, " "); c = (y[2] - x[2]) / 1e9 / (y[1] - x[1]); printf "%.0f", (c > 0 ? r / c : 0) }')
    # Per request: the database's transactions and Redis's commands over wrk's answers (the
    # badger node talks to neither, so its columns show the others' idle traffic: none).
    printf '  %-6s %-7s %8s req/s  p50 %7s ms  p99 %7s ms  non-2xx %-4s  pg xact/req %s  pg scans/req %s  redis cmd/req %s  pg conns %s%s\n' \
      "$setup" "$m" "$rps" "$p50" "$p99" "$bad" \
      "$(awk -v a="$x0" -v b="$x1" -v r="$rps" -v d="${dur%s}" 'BEGIN { printf "%.2f", (b - a) / (r * d > 0 ? r * d : 1) }')" \
      "$(awk -v a="$s0" -v b="$s1" -v r="$rps" -v d="${dur%s}" 'BEGIN { printf "%.2f", (b - a) / (r * d > 0 ? r * d : 1) }')" \
      "$(awk -v a="$r0" -v b="$r1" -v r="$rps" -v d="${dur%s}" 'BEGIN { printf "%.2f", (b - a) / (r * d > 0 ? r * d : 1) }')" \
      "$conns_now" "$([ $# -gt 1 ] && echo "  per node $per")"
    cpuline $# "$rps" "$c0" "$c1"
    # What the database's sessions did (averaged over the run) and the serialization failures
    # (retried by the nodes) per request.
    [ "$setup" = badger ] || printf '           pg sessions (average): %s;  pg serialization failures/req %s\n' "$(sessions "$work/sessions")" \
      "$(awk -v a="$b0" -v b="$b1" -v r="$rps" -v d="${dur%s}" 'BEGIN { printf "%.3f", (b - a) / (r * d > 0 ? r * d : 1) }')"
  done
}
# idle SETUP: the database transactions and Redis commands per second the nodes make with no
# request at all (journal polling, queue scans, leases, subscriptions).
# With cpuacct, also the cores the nodes used meanwhile (background work: index merges, GC).
idle() {
  local x0 r0 c0
  x0=$(xacts) r0=$(rcmds) c0=$(cpu); sleep 10
  printf '  %-6s idle    %s pg xact/s  %s redis cmd/s  pg conns %s%s\n' "$1" \
    "$(awk -v a="$x0" -v b="$(xacts)" 'BEGIN { printf "%.1f", (b - a) / 10 }')" \
    "$(awk -v a="$r0" -v b="$(rcmds)" 'BEGIN { printf "%.1f", (b - a) / 10 }')" "$(pgconns)" \
    "$([ -z "$acct" ] || awk -v b="$c0" -v a="$(cpu)" 'BEGIN { split(b, x, " "); split(a, y, " "); printf "  nodes cpu %.3f cores", (y[2] - x[2]) / 1e9 / (y[1] - x[1]) }')"
}

quota="no CPU quota (the nodes share the machine's cores)"
[ "$node_cpu" != off ] && quota="each node $node_cpu of a core (cgroup cpu quota $(awk -v q="$node_cpu" -v p="$period" 'BEGIN { printf "%d", q * p }') µs per $period µs, GOMAXPROCS=$gomaxprocs)"
echo "bench-scale-out: $n records, mixes ($mixes) and durable record creates (writes), $dur each, $conns connections per node, $(nproc) cores (shared), $quota; load average $(cut -d' ' -f1-3 /proc/loadavg)"
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
echo "ratios ($quota; load average $(cut -d' ' -f1-3 /proc/loadavg)):"
# pg3/pg1 per node core: the req/s each core of node CPU served with three nodes against one (1:
# three nodes spend no more node CPU on a request than one; printed where cpuacct is there).
for m in $mixes writes; do
  awk -v m="$m" -v b="${res[badger.$m]}" -v p1="${res[pg1.$m]}" -v p3="${res[pg3.$m]}" -v c1="${res[pg1.$m.core]}" -v c3="${res[pg3.$m.core]}" \
    'BEGIN { printf "  %-7s pg1/badger %.2f   pg3/pg1 %.2f", m, p1 / (b > 0 ? b : 1), p3 / (p1 > 0 ? p1 : 1)
      if (c1 > 0) printf "   pg3/pg1 per node core %.2f", c3 / c1
      printf "\n" }'
done
