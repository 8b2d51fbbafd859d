# Forms product: the forms-embed bundle check, the Chromium browser test and the submission
# benchmark. The bundle is built by sdk-js/packages/forms-embed into edge/embedhost/assets/
# and committed, so the Go build never needs npm; test-forms-bundle proves it is current.
TEST_EXTRA += test-forms-bundle test-forms-browser
BENCH_TARGETS += bench-forms bench-forms-multipart

FORMS_BUNDLE := edge/embedhost/assets/forms.js edge/embedhost/assets/forms.css

.PHONY: test-forms-bundle test-forms-browser bench-forms bench-forms-multipart

test-forms-bundle: test-sdk ## rebuild forms-embed and fail if the committed bundle in edge/embedhost/assets differs
	cd sdk-js && npm run build --workspace @gatehouse/forms-embed
	@git diff --exit-code -- $(FORMS_BUNDLE) || { echo "forms bundle is stale: commit $(FORMS_BUNDLE) after 'npm run build' in sdk-js"; exit 1; }
	@test -z "$$(git status --porcelain -- $(FORMS_BUNDLE))" || { echo "forms bundle is not committed: $(FORMS_BUNDLE)"; exit 1; }

test-forms-browser: test-sdk build ## Chromium test of forms.js and the iframe page against a real gateway (screenshot saved)
	bash sdk-js/packages/forms-embed/browser/run-against-gateway.sh $(CURDIR)/$(BIN)

bench-forms: ## durable submissions/s, 64 concurrent clients over loopback (p50/p99), and the commit path without HTTP
	$(GO) test -run '^$$' -bench 'BenchmarkSubmit' -benchtime 20000x ./products/forms/

bench-forms-multipart: ## the real server's RSS under 3 floods of 50 concurrent 10 MB multipart submissions (FLOODS, CLIENTS; GATEHOUSE_BIN=another build)
	bash products/forms/bench/multipart-flood.sh $(or $(FLOODS),3) $(or $(CLIENTS),50)
