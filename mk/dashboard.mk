# Dashboard: the React app in sdk-js/packages/dashboard, built by esbuild into
# edge/dashboard/assets/ and committed (the Go build never needs npm), and its Chromium test
# against the real binary. test-dashboard-bundle proves the committed build is current and
# prints the first load's compressed size (budget 300 KB).
TEST_EXTRA += test-dashboard-bundle test-dashboard-browser

DASHBOARD_BUNDLE := edge/dashboard/assets/index.html edge/dashboard/assets/app.js edge/dashboard/assets/app.css edge/dashboard/assets/favicon.svg

.PHONY: test-dashboard-bundle test-dashboard-browser

test-dashboard-bundle: test-sdk ## rebuild the dashboard (prints its gzip size) and fail if the committed build in edge/dashboard/assets differs
	cd sdk-js && npm run build --workspace @gatehouse/dashboard
	@git diff --exit-code -- $(DASHBOARD_BUNDLE) || { echo "dashboard bundle is stale: commit $(DASHBOARD_BUNDLE) after 'npm run build' in sdk-js"; exit 1; }
	@test -z "$$(git status --porcelain -- $(DASHBOARD_BUNDLE))" || { echo "dashboard bundle is not committed: $(DASHBOARD_BUNDLE)"; exit 1; }

test-dashboard-browser: test-sdk build ## Chromium test of the dashboard against a real gateway (screenshots in sdk-js/packages/dashboard/browser/test-output/)
	CI=true bash sdk-js/packages/dashboard/browser/run-against-gateway.sh $(CURDIR)/$(BIN)
