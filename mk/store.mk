# Embedded store: `make test` also runs its package under the race detector, since it reaches
# into badger's goroutines (drainBuilders) and runs its own group committer beside them.
TEST_EXTRA += test-store-race

.PHONY: test-store-race

test-store-race: ## store tests with the race detector (badger flushes and compactions beside the group committer)
	$(GO) test -race -count=1 ./edge/store/
