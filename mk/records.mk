# Records product: the records load benchmark (recordsbench) over loopback, and its 1M variant.
# RECORDS_N sets the number of generated records; RECORDS_DURATION the load per query mix.
BENCH_TARGETS += bench-records

RECORDS_N ?= 100000
RECORDS_DURATION ?= 5s

.PHONY: bench-records bench-records-1m

bench-records: ## records: import RECORDS_N (100k) records, start-up time, req/s p50 p99 of 4 query mixes vs bare fiber
	$(GO) run ./products/records/cmd/recordsbench -n $(RECORDS_N) -duration $(RECORDS_DURATION)

bench-records-1m: ## records: the same benchmark at 1,000,000 records (takes several minutes)
	$(GO) run ./products/records/cmd/recordsbench -n 1000000 -duration 10s
