# Email product: the SIGKILL crash test runs in `go test ./...` already (it re-executes the test
# binary as the child process); `make test` also runs the package under the race detector.
TEST_EXTRA += test-email
BENCH_TARGETS += bench-email

.PHONY: bench-email test-email fuzz-email

test-email: ## email product tests with the race detector (SMTP server on loopback, crash test)
	$(GO) test -race -count=1 ./products/email/...

fuzz-email: ## fuzz the email template renderer, HTML-to-text and the address encoder for FUZZTIME each (default 20s)
	$(GO) test -run '^$$' -fuzz '^FuzzRender$$' -fuzztime $${FUZZTIME:-20s} ./products/email/
	$(GO) test -run '^$$' -fuzz '^FuzzHTMLToText$$' -fuzztime $${FUZZTIME:-20s} ./products/email/
	$(GO) test -run '^$$' -fuzz '^FuzzEncodeAddress$$' -fuzztime $${FUZZTIME:-20s} ./products/email/

bench-email: ## accepted sends/s (durable grouped commits, loopback HTTP) and SMTP delivery rate with reused connections
	$(GO) test -run '^$$' -bench 'BenchmarkSendAccepted' -benchtime 20000x ./products/email/
	$(GO) test -run '^$$' -bench 'BenchmarkDeliverSMTP' -benchtime 5000x ./products/email/
