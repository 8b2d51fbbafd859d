# OpenAPI: the document edge/openapi/openapi.yaml (served at /openapi.json) and its reference
# page at /docs/ (Redoc's standalone bundle, committed in edge/openapi/reference/ so the Go build
# never needs npm). The document's Go checks (3.1 validity, the drift test against the server's
# routes, response validation in edgetest) run in `go test`; these add the linter and prove the
# committed bundle is the pinned release's.
TEST_EXTRA += test-openapi-lint test-openapi-reference

REDOCLY_CLI_VERSION := 2.77.0
REDOC_VERSION := 3.0.1
OPENAPI_DOC := edge/openapi/openapi.yaml
OPENAPI_REFERENCE := edge/openapi/reference

.PHONY: test-openapi-lint openapi-reference test-openapi-reference

test-openapi-lint: ## lint the OpenAPI document with @redocly/cli (recommended rules, warnings fail)
	npx --yes @redocly/cli@$(REDOCLY_CLI_VERSION) lint $(OPENAPI_DOC) --max-problems 50 --format stylish 2>&1 | tee /tmp/gatehouse-openapi-lint.txt
	@! grep -Eq '(warning|error) ' /tmp/gatehouse-openapi-lint.txt || { echo "the OpenAPI document has lint problems"; exit 1; }

openapi-reference: ## fetch Redoc's standalone bundle (npm package redoc, pinned) into edge/openapi/reference/
	rm -rf .openapi-reference && mkdir -p .openapi-reference
	cd .openapi-reference && npm pack --silent redoc@$(REDOC_VERSION) >/dev/null && tar xzf redoc-$(REDOC_VERSION).tgz
	cp .openapi-reference/package/bundles/redoc.standalone.js $(OPENAPI_REFERENCE)/redoc.standalone.js
	cp .openapi-reference/package/LICENSE $(OPENAPI_REFERENCE)/redoc.LICENSE
	rm -rf .openapi-reference

test-openapi-reference: openapi-reference ## fail if the committed Redoc bundle is not the pinned release's
	@git diff --exit-code -- $(OPENAPI_REFERENCE) || { echo "edge/openapi/reference is not redoc@$(REDOC_VERSION): commit what 'make openapi-reference' wrote"; exit 1; }
