#!/usr/bin/env bash
# hooks-wrk.sh: bench-hooks-wrk. Starts the real `gatehouse serve` (durable commits,
# storage.sync_writes: true; forms.rate_per_minute raised so the limit is not what is measured;
# egress.allow_private_networks: true; the outbox email transport) with two projects: `plain`,
# whose form `contact` has no notification, and `hooked`, whose form `contact` has notify (one
# address), autoReply and a form.submitted webhook to a local receiver (receiver.py, another
# process, answers 200). Then drives each with wrk from another process, 16 connections,
# HOOKS_DURATION (10 s) each, JSON submissions: plain first, hooked second. Prints accepted
# submissions/s, p50, p99 and the status classes of each phase, the hooked/plain ratio, and how
# many webhook deliveries and outbox emails the hooked submissions produced.
set -euo pipefail
dur=${HOOKS_DURATION:-10s}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
command -v wrk >/dev/null || { echo "hooks-wrk: wrk is missing (apt-get install wrk)" >&2; exit 1; }
go build -o "$root/bin/gatehouse" "$root/edge/cmd/gatehouse"
work=$(mktemp -d)
pid= rpid=
trap '[ -n "$pid" ] && { kill $pid 2>/dev/null; wait $pid 2>/dev/null; }; [ -n "$rpid" ] && kill $rpid 2>/dev/null; rm -rf "$work"' EXIT

python3 "$here/receiver.py" "$work/receiver.port" &
rpid=$!
for _ in $(seq 1 100); do [ -s "$work/receiver.port" ] && break; sleep 0.05; done
receiver=http://127.0.0.1:$(cat "$work/receiver.port")

# A free port of this machine's choosing (other benchmarks may run beside this one).
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
url=http://127.0.0.1:$port
cat > "$work/gatehouse.yaml" <<YAML
listen: "127.0.0.1:$port"
public_url: "$url"
admin_token: "bench-hooks-admin-token"
log_level: warn
storage:
  sync_writes: true
forms:
  rate_per_minute: 100000000
egress:
  allow_private_networks: true
email:
  transport: outbox
YAML
form() { # the form contact, then $1: extra lines of its YAML
  cat <<YAML
        forms:
          - slug: contact
            title: Contact
            published: true
            fields:
              - {name: name, type: text, required: true}
              - {name: email, type: email, required: true}
              - {name: message, type: textarea}
$1
YAML
}
cat > "$work/tenants.yaml" <<YAML
orgs:
  - slug: bench
    projects:
      - id: plain
        keys:
          - {name: web, value: pk_live_bench_plain, products: [forms]}
        email:
          from: {email: forms@bench.test, name: Bench}
$(form "")
      - id: hooked
        keys:
          - {name: web, value: pk_live_bench_hooked, products: [forms]}
        email:
          from: {email: forms@bench.test, name: Bench}
          templates:
            - slug: thanks
              subject: "Thanks, {{name}}"
              body: "Hi {{name}}, we got your message."
$(form "            notify: {to: [owner@bench.test]}
            autoReply: {emailField: email, template: thanks}")
        webhooks:
          - name: main
            url: "$receiver/hook"
            events: [form.submitted]
YAML
"$root/bin/gatehouse" serve --data "$work/data" --config "$work/gatehouse.yaml" --tenants "$work/tenants.yaml" >"$work/serve.log" 2>&1 &
pid=$!
for _ in $(seq 1 3000); do
  kill -0 $pid 2>/dev/null || { cat "$work/serve.log" >&2; exit 1; }
  curl -fs "$url/readyz" >/dev/null 2>&1 && break; sleep 0.1
done
# One submission each first: both forms answer 201 before the load starts.
for p in plain hooked; do
  curl -fs -o /dev/null -H "X-API-Key: pk_live_bench_$p" -H 'Content-Type: application/json' \
    -d '{"data":{"name":"Warm","email":"warm@example.test"}}' "$url/forms/forms/contact/submit" ||
    { echo "hooks-wrk: the $p form refused a submission" >&2; cat "$work/serve.log" >&2; exit 1; }
done
run() { KEY=pk_live_bench_$1 wrk -t2 -c16 -d"$dur" --latency -s "$here/submit.lua" "$url"; }
plain=$(run plain)
hooked=$(run hooked)
line() { # name output
  read -r _ rps p50 p99 <<<"$(grep '^RESULT' <<<"$2")"
  echo "$1: $rps accepted/s, p50 ${p50} ms, p99 ${p99} ms, $(grep '^STATUS' <<<"$2" | cut -d' ' -f2-), socket errors: $(grep -c 'Socket errors' <<<"$2" || true)"
}
echo "bench-hooks-wrk: 16 connections, $dur per phase, sync_writes on, $(nproc) cores (shared)"
line "plain form                          " "$plain"
line "notify + autoReply + webhook form   " "$hooked"
p=$(grep '^RESULT' <<<"$plain" | awk '{print $2}') h=$(grep '^RESULT' <<<"$hooked" | awk '{print $2}')
echo "hooked/plain: $(awk -v p="$p" -v h="$h" 'BEGIN{printf "%.2f", h/p}')"
# The work was done: every accepted hooked submission is one webhook event and two emails
# (one notification, one auto-reply). Deliveries and sends drain after the load: wait up to
# 120 s for them.
accepted=$(( $(grep '^STATUS' <<<"$hooked" | sed 's/.*2xx=\([0-9]*\).*/\1/') + 1 ))
emails() { find "$work/data/outbox" -name '*.eml' 2>/dev/null | wc -l; }
start=$(date +%s)
for _ in $(seq 1 1200); do
  read -r reqs ids <<<"$(curl -fs "$receiver/count" || echo 0 0)"
  [ "$ids" -ge "$accepted" ] && [ "$(emails)" -ge $((2 * accepted)) ] && break; sleep 0.1
done
echo "after $(( $(date +%s) - start )) s: $ids distinct webhook events in $reqs requests (at-least-once) for $accepted accepted hooked submissions (with the warm-up one); $(emails) outbox emails, want $((2 * accepted))"
echo "delivery attempts by outcome (/metrics):"
curl -fs "$url/metrics" | grep '^gatehouse_webhook_deliveries_total' | sed 's/^/  /'
