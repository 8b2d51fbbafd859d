# PostgreSQL: the shared-storage backend's tests need Debian's server binaries (initdb,
# postgres under /usr/lib/postgresql/*/bin); edge/store/pgtest starts private servers from them.
BENCH_TARGETS += bench-store
SUDO ?= $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: test-deps test-deps-postgres bench-store
test-deps: test-deps-postgres ## install what the tests need (Debian packages), when missing

test-deps-postgres: ## install Debian's postgresql (server binaries for the tests' private servers), when missing
	@if ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then \
		echo "installing postgresql"; \
		$(SUDO) apt-get update -q && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -q postgresql; \
	fi

test-go: test-deps-postgres

bench-store: ## Update and View of the store on badger and on PostgreSQL (a private server), side by side
	$(GO) test ./edge/store -run '^$$' -bench 'Benchmark(Update|View)' -benchtime 2s
