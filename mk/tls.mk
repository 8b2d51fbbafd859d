# HTTPS at the edge (edge/certs, decisions.md 9.4): the tests run Debian's pebble, Let's
# Encrypt's ACME test server, privately on loopback (edge/certs/pebbletest); under make a
# missing pebble fails them instead of skipping.
SUDO ?= $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: test-deps-pebble test-tls
test-deps-pebble: ## install Debian's pebble (the ACME test CA of the TLS tests), when missing
	@command -v pebble >/dev/null || { echo "installing pebble"; \
		$(SUDO) apt-get update -q && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -q pebble; }

test-go: test-deps-pebble
test-go: export GATEHOUSE_REQUIRE_PEBBLE = 1

test-tls: test-deps-pebble test-deps-postgres ## the TLS tests: issuance, on demand, refusal, redirect, restart without the CA, two nodes (and two gateway processes) on postgres, renewal (on-demand ones in the background), tenant-domain routing
	GATEHOUSE_REQUIRE_PEBBLE=1 $(GO) test -count=1 ./edge/certs/...
	GATEHOUSE_REQUIRE_PEBBLE=1 $(GO) test -count=1 -run '^(TestHTTPSAtTheEdge|TestHTTPSTwoNodesOnPostgres|TestTenantDomainKeys)$$' ./edge/cmd/gatehouse
