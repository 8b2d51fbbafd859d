# Scale-out (issue 17, decisions.md 8.4): the records read mixes and durable writes on one node
# with badger, one node with PostgreSQL and three nodes with PostgreSQL + Redis, under wrk
# against the real server; ratios in docs/performance.md ("Scale-out"). Every node gets the same
# CPU quota (NODE_CPU cores, default 0.15; a cgroup v1 cpu group, root) in every setup, so that
# three nodes against one measure the design rather than the machine's shared cores; NODE_CPU=off
# runs them without. Private PostgreSQL and Redis servers are started in temporary folders and
# stopped after.
BENCH_TARGETS += bench-scale-out

.PHONY: bench-scale-out
bench-scale-out: test-deps-postgres test-deps-redis ## scale-out: records mixes (SCALE_MIXES="a b") and durable creates/s on badger, 1 node and 3 nodes on PostgreSQL, at RECORDS_N records (SCALE_DURATION, SCALE_CONNS per node), each node held to NODE_CPU cores (0.15; off: no quota)
	@dir="$(or $(RECORDS_DIR),$(CURDIR)/.bench/records-$(RECORDS_N))"; \
	test -d "$$dir/db" || $(GO) run ./products/records/cmd/recordsbench -n $(RECORDS_N) -dir "$$dir" -only none -duration 1s; \
	edge/cmd/gatehouse/bench/scale-out.sh "$$dir" $(RECORDS_N)
