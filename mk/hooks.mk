# Webhooks and form notifications (decisions.md 8.3): accepted submissions per second with a
# notify address, an auto-reply and a webhook configured, against the same form without them.
BENCH_TARGETS += bench-hooks-wrk

.PHONY: bench-hooks-wrk

bench-hooks-wrk: ## accepted JSON submissions/s, p99 and non-2xx of a form with notify + autoReply + a webhook vs one without, under wrk against the real server (ratio in docs/performance.md)
	edge/webhooks/bench/hooks-wrk.sh
