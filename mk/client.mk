# @gatehouse/client (sdk-js/packages/client): its vitest suite against the real binary.
# test-sdk already installs the workspace, builds it and runs the client's unit tests (the
# schema.d.ts freshness check among them); this adds the suite that starts bin/gatehouse.
TEST_EXTRA += test-client

.PHONY: test-client client-generate
test-client: build test-sdk ## vitest: @gatehouse/client against bin/gatehouse with configs/demo.tenants.yaml (every product, typed errors)
	cd sdk-js && GATEHOUSE_BIN=$(CURDIR)/$(BIN) npm run test:gateway --workspace @gatehouse/client

client-generate: ## regenerate sdk-js/packages/client/src/schema.d.ts from edge/openapi/openapi.yaml
	cd sdk-js && npm run generate --workspace @gatehouse/client
