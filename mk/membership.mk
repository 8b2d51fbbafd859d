# membership: the browser test of @gatehouse/membership against a real gateway, and the
# GET /membership/config benchmarks.
TEST_EXTRA += test-browser-membership
BENCH_TARGETS += bench-membership

.PHONY: test-browser-membership bench-membership
test-browser-membership: build test-sdk ## headless Chromium: the membership example page against bin/gatehouse (apt-get installs chromium when missing)
	bash sdk-js/examples/membership/run-against-gateway.sh $(BIN)

bench-membership: ## GET /membership/config benchmarks: cached service read and loopback requests
	$(GO) test -run '^$$' -bench . -benchmem ./products/membership
