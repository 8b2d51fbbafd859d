# sdk-js: the browser packages (npm workspace). `npm ci` installs exactly the lock file.
TEST_EXTRA += test-sdk

.PHONY: test-sdk
test-sdk: ## npm ci, build and unit-test the sdk-js packages (vitest)
	cd sdk-js && { npm ci --no-audit --no-fund || { echo "npm ci failed; retrying once"; sleep 5; npm ci --no-audit --no-fund; }; } && npm run build && npm test
