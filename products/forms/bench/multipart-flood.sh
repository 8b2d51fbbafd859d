#!/usr/bin/env bash
# multipart-flood.sh [FLOODS] [CLIENTS]: the memory of the real server under multipart form
# floods. Starts `gatehouse serve` on a fresh data folder with a form of two file fields, then
# runs FLOODS (default 3) floods of CLIENTS (default 50) concurrent submissions, each ~9.8 MB
# (two 4.9 MB PNG parts, sent by curl from files, so the client holds nothing), and prints the
# server's VmRSS before, its peak during each flood (sampled every 50 ms), and after each flood
# once the answers are in and again 10 s later. Every submission must answer 201.
# GATEHOUSE_BIN runs another build (e.g. an older commit) instead of building this tree.
set -euo pipefail
floods=${1:-3} clients=${2:-50}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
bin=${GATEHOUSE_BIN:-}
if [ -z "$bin" ]; then
  go build -o "$root/bin/gatehouse" "$root/edge/cmd/gatehouse"
  bin=$root/bin/gatehouse
fi
work=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && { kill $pid 2>/dev/null; wait $pid 2>/dev/null; }; rm -rf "$work"' EXIT
port=${FLOOD_PORT:-18089}
printf 'listen: "127.0.0.1:%s"\nlog_level: warn\n' "$port" > "$work/gatehouse.yaml"
{
  echo 'orgs:'
  echo '  - slug: bench'
  echo '    name: Bench'
  echo '    projects:'
  echo '      - id: flood'
  echo '        name: Flood'
  echo '        keys:'
  # One key per flood: the submission rate limit is 60 per minute per key and form.
  for f in $(seq 1 "$floods"); do echo "          - {name: k$f, value: pk_live_flood_k$f, products: [forms]}"; done
  echo '        forms:'
  echo '          - slug: gallery'
  echo '            title: Two photos'
  echo '            published: true'
  echo '            fields:'
  echo '              - {name: caption, type: text}'
  echo '              - {name: front, type: file, accept: [image/png]}'
  echo '              - {name: back, type: file, accept: [image/png]}'
} > "$work/tenants.yaml"
# Two 4.9 MB PNGs: a real PNG signature and header, then filler.
for n in front back; do
  { printf '\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89'
    head -c $((49 * 1024 * 1024 / 10 - 33)) /dev/urandom; } > "$work/$n.png"
done
"$bin" serve --data "$work/data" --config "$work/gatehouse.yaml" --tenants "$work/tenants.yaml" >"$work/out.log" 2>&1 &
pid=$!
for _ in $(seq 1 600); do curl -fs "http://127.0.0.1:$port/readyz" >/dev/null 2>&1 && break; sleep 0.1; done
rss() { awk '/^VmRSS/ {print int($2/1024)}' "/proc/$pid/status"; }
submit() { # key
  curl -s -o /dev/null -w '%{http_code}\n' -H "X-API-Key: $1" \
    -F caption=flood -F "front=@$work/front.png;type=image/png" -F "back=@$work/back.png;type=image/png" \
    "http://127.0.0.1:$port/forms/forms/gallery/submit"
}
test "$(submit pk_live_flood_k1)" = 201 || { echo "warm-up submission failed"; cat "$work/out.log"; exit 1; }
sleep 1
base=$(rss)
echo "server VmRSS after start and one submission: $base MB"
for f in $(seq 1 "$floods"); do
  peak=$(rss)
  ( for _ in $(seq 1 "$clients"); do submit "pk_live_flood_k$f" >>"$work/codes.$f" & done; wait ) &
  group=$!
  while kill -0 "$group" 2>/dev/null; do
    r=$(rss); [ "$r" -gt "$peak" ] && peak=$r
    sleep 0.05
  done
  wait "$group"
  ok=$(grep -c '^201$' "$work/codes.$f" || true)
  after=$(rss)
  sleep 10
  settled=$(rss)
  echo "flood $f: $ok/$clients answered 201; VmRSS peak $peak MB (+$((peak - base))), after $after MB (+$((after - base))), 10 s later $settled MB (+$((settled - base)))"
  if [ "$ok" -ne "$clients" ]; then sort "$work/codes.$f" | uniq -c; exit 1; fi
done
