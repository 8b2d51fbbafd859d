# Plugins: the example Wasm modules and the plugin benchmarks.
BENCH_TARGETS += bench-plugins

.PHONY: plugins bench-plugins fuzz-plugins
plugins: ## build the example Wasm plugins to plugins/examples/*.wasm (tests build their own)
	plugins/examples/build.sh

bench-plugins: ## plugin per-call overhead (no-op and spam filter, p50/p99) and forms submits/s with and without the spam filter
	$(GO) test ./plugins/host -run '^$$' -bench . -benchtime 3000x
	$(GO) test ./edge/cmd/gatehouse -run '^$$' -bench BenchmarkFormsSubmitSpamFilter -benchtime 20000x

fuzz-plugins: ## fuzz the host side of the plugin ABI and the loop guard's rewriter for 30s each
	$(GO) test ./plugins/host -run '^$$' -fuzz '^FuzzABI$$' -fuzztime 30s
	$(GO) test ./plugins/host -run '^$$' -fuzz '^FuzzGuardCompiles$$' -fuzztime 30s
	$(GO) test ./plugins/guard -run '^$$' -fuzz '^FuzzInstrument$$' -fuzztime 30s
