# The product suites again on the postgres backend (decisions.md 8.4: a matrix, not a sample).
# GATEHOUSE_TEST_STORE=postgres puts every test that opens its store through
# edge/edgetest/storetest (edgetest's harness among them) on a fresh database of a private
# PostgreSQL server (edge/store/pgtest, one per test binary, stopped after it); the real-binary
# tests of edge/cmd/gatehouse named in MATRIX_GATEHOUSE start their nodes on it (the others
# are about badger's folder, the CLI or plugins, and run once, in test-go). A node restarted on
# its data folder keeps its node id (node-id), so TestNotificationAndWebhookSurviveSIGKILL's
# restarted node takes the killed one's leases back at once on postgres too. Without -race.
TEST_EXTRA += test-postgres

MATRIX_PKGS := ./products/... ./index/fields ./edge ./edge/auth ./edge/admin ./edge/accounts \
	./edge/tenancy ./edge/webhooks
MATRIX_GATEHOUSE := TestRestartKeepsAcknowledgedWrites|TestCrashKeepsAcknowledgedWrites|TestRecordWritesSurviveSIGKILL|TestSIGTERMGraceful|TestWebhook.*|TestNotificationAndWebhookSurviveSIGKILL|TestAdminListsWithoutSecrets|TestAdminRoutesScopeEveryRoute|TestApply.*|TestFormEmailsPassTheEmailSendHook|TestJSONRoutesRefuseHostileBodies|TestKeyValuesNeverLogged|TestExamplePluginsInTheGateway

.PHONY: test-postgres
test-postgres: test-deps-postgres ## the product suites and the gateway's restart, crash, webhook and scope tests again on the postgres backend
	GATEHOUSE_TEST_STORE=postgres $(GO) test -count=1 -timeout 15m $(MATRIX_PKGS)
	GATEHOUSE_TEST_STORE=postgres $(GO) test -count=1 -timeout 15m -run '^($(MATRIX_GATEHOUSE))$$' ./edge/cmd/gatehouse
