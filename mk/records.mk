# Records product: the records load benchmark (recordsbench) over loopback, and its 1M variant.
# RECORDS_N sets the number of generated records; RECORDS_DURATION the load per query mix.
BENCH_TARGETS += bench-records bench-records-writes

RECORDS_N ?= 100000
RECORDS_DURATION ?= 5s

.PHONY: bench-records bench-records-1m

bench-records: ## records: import RECORDS_N (100k) records, start-up time, req/s p50 p99 of 4 query mixes vs bare fiber
	$(GO) run ./products/records/cmd/recordsbench -n $(RECORDS_N) -duration $(RECORDS_DURATION)

bench-records-1m: ## records: the same benchmark at 1,000,000 records (takes several minutes)
	$(GO) run ./products/records/cmd/recordsbench -n 1000000 -duration 10s

.PHONY: bench-records-server-rss
bench-records-server-rss: ## records: the real server's RSS and req/s under wrk, on a folder made by recordsbench -dir (RECORDS_DIR, RECORDS_N, RECORDS_MIXES="a b", RECORDS_MEMORY_MB=0)
	@test -n "$(RECORDS_DIR)" || { echo "set RECORDS_DIR to a folder made by: go run ./products/records/cmd/recordsbench -n N -dir DIR"; exit 2; }
	products/records/bench/server-rss.sh $(RECORDS_DIR) $(RECORDS_N) "$(or $(RECORDS_MIXES),a b)" $(or $(RECORDS_MEMORY_MB),0)

.PHONY: bench-records-writes
bench-records-writes: ## records: durable record creates/s (admin API) and form submissions/s against the real server under wrk, 16 connections, at RECORDS_N records, 3 rounds and their medians (WRITES_ROUNDS; RECORDS_DIR: a recordsbench -dir folder, made when missing)
	@dir="$(or $(RECORDS_DIR),$(CURDIR)/.bench/records-$(RECORDS_N))"; \
	test -d "$$dir/db" || $(GO) run ./products/records/cmd/recordsbench -n $(RECORDS_N) -dir "$$dir" -only none -duration 1s; \
	products/records/bench/writes.sh "$$dir" $(RECORDS_N)

# The side-by-side comparison with PocketBase v0.40.4 (products/records/bench/compare.sh):
# import rate, read mixes (a)-(e) and creates (f) on both servers in one run, with ratios and
# VmHWM. COMPARE_N posts (100,000).
COMPARE_N ?= 100000
.PHONY: bench-records-pocketbase
bench-records-pocketbase: ## records: Gatehouse beside PocketBase v0.40.4 on the same posts (import, mixes a-f, ratios, VmHWM)
	products/records/bench/compare.sh $(COMPARE_N)
