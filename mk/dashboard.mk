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

# The screenshots of docs/dashboard.md, taken by the Chromium suite against the real binary:
# each page at 1280 px, a few at 390 px, reduced to 256 colours when ImageMagick is installed.
# Run after a change to the dashboard and commit them.
DASHBOARD_SHOTS := signin page-overview-1280 page-projects-1280 page-keys-1280 page-email-1280 \
	page-forms-1280 page-files-1280 page-records-1280 records-editor records-validation \
	page-membership-1280 page-plugins-1280 page-webhooks-1280 webhooks-created page-members-1280 \
	page-account-1280 page-overview-390 page-records-390 menu-390

.PHONY: dashboard-screenshots
dashboard-screenshots: build ## run the dashboard's Chromium suite and copy its screenshots to docs/images/dashboard/
	CI=true bash sdk-js/packages/dashboard/browser/run-against-gateway.sh $(CURDIR)/$(BIN)
	mkdir -p docs/images/dashboard
	for s in $(DASHBOARD_SHOTS); do cp sdk-js/packages/dashboard/browser/test-output/$$s.png docs/images/dashboard/; done
	@# 256 colours halve them (ImageMagick, when installed; the plain copies otherwise).
	if command -v convert >/dev/null; then for s in $(DASHBOARD_SHOTS); do convert docs/images/dashboard/$$s.png -colors 256 PNG8:docs/images/dashboard/$$s.png; done; fi
