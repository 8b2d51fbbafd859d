# Redis: the shared rate limits (edge/ratelimit/redisrate) and the change feed between nodes
# (edge/bus). Their tests start Debian's redis-server privately (edge/redistest) on a free
# loopback port, or use GATEHOUSE_TEST_REDIS_URL; a missing redis-server fails them, so the Go
# tests install it first.
SUDO ?= $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: test-deps-redis bench-redis
test-deps-redis: ## install Debian's redis-server when missing (the Redis tests start private instances of it)
	@command -v redis-server >/dev/null || [ -x /usr/bin/redis-server ] || { \
		echo "installing redis-server"; \
		$(SUDO) apt-get update -q && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -q redis-server; }

test-go: test-deps-redis
bench-go: test-deps-redis

BENCH_TARGETS += bench-redis
bench-redis: test-deps-redis ## shared GCRA limiter: one Allow through Redis vs the in-memory limiter (parallel callers)
	$(GO) test ./edge/ratelimit/redisrate -run '^$$' -bench BenchmarkSharedLimiter -benchmem -benchtime 2s
