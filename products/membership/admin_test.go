package membership_test

import (
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/edge/edgetest"
)

// GET /admin/v1/projects/{project}/connections lists every connection in name order with its
// active flag; the identity provider's secret key is never in the answer, only its presence.
func TestAdminConnections(t *testing.T) {
	t.Parallel()
	h := start(t)
	r := h.Admin("GET", "/projects/demo/connections", nil)
	want := `{"items":[{"name":"main","active":true,"idpPublishableKey":"pk_test_Y2xlcmsuZXhhbXBsZS5jb20k","idpInstanceDomain":"clerk.example.com","hasIdpSecretKey":true,"signUpEnabled":true,"organizationsEnabled":false,"appearance":{"variables":{"colorPrimary":"#0f766e"}}},` +
		`{"name":"next","active":false,"idpPublishableKey":"pk_live_Y2xlcmsubmV4dC5leGFtcGxlJA","idpInstanceDomain":"next.example","hasIdpSecretKey":true,"signUpEnabled":false,"organizationsEnabled":true}],"pagination":{"nextCursor":null}}`
	if r.Status != 200 || string(r.Body) != want {
		t.Errorf("connections = %d %s\nwant %s", r.Status, r.Body, want)
	}
	for _, secret := range []string{"sk_test_never_returned", "sk_live_next_secret", "idpSecretKey\""} {
		if strings.Contains(string(r.Body), secret) {
			t.Errorf("connections answer holds %q", secret)
		}
	}
	if r := h.Admin("GET", "/projects/bare/connections", nil); r.Status != 200 || !strings.Contains(string(r.Body), `"name":"retired","active":false`) || !strings.Contains(string(r.Body), `"hasIdpSecretKey":false`) {
		t.Errorf("bare connections = %d %s", r.Status, r.Body)
	}
	if r := h.Admin("GET", "/projects/empty/connections", nil); r.Status != 200 || string(r.Body) != `{"items":[],"pagination":{"nextCursor":null}}` {
		t.Errorf("no connections = %d %s", r.Status, r.Body)
	}
}

// PUT .../connections/{name}/active switches the active connection: GET /config follows at
// once (the cache hears the change), at most one stays active, false leaves none, and the next
// apply of the document writes its own active: back.
func TestAdminActiveSwitch(t *testing.T) {
	t.Parallel()
	h := start(t)
	config := func() (int, string) {
		r := h.Do("GET", "/membership/config", nil, "X-API-Key", "pk_live_demo_web")
		return r.Status, string(r.Body)
	}
	if code, body := config(); code != 200 || !strings.Contains(body, "clerk.example.com") {
		t.Fatalf("config before = %d %s", code, body)
	}
	r := h.Admin("PUT", "/projects/demo/connections/next/active", map[string]any{"active": true})
	if r.Status != 200 || !strings.Contains(string(r.Body), `"name":"main","active":false`) || !strings.Contains(string(r.Body), `"name":"next","active":true`) {
		t.Fatalf("switch to next = %d %s", r.Status, r.Body)
	}
	if strings.Contains(string(r.Body), "sk_live_next_secret") || strings.Contains(string(r.Body), "sk_test_never_returned") {
		t.Errorf("the switch's answer holds a secret: %s", r.Body)
	}
	if code, body := config(); code != 200 || !strings.Contains(body, "next.example") {
		t.Errorf("config after the switch = %d %s, want next's", code, body)
	}
	// Switching again to the active one changes nothing.
	if r := h.Admin("PUT", "/projects/demo/connections/next/active", map[string]any{"active": true}); r.Status != 200 {
		t.Errorf("switch to the active one = %d %s", r.Status, r.Body)
	}
	if r := h.Admin("PUT", "/projects/demo/connections/next/active", map[string]any{"active": false}); r.Status != 200 || strings.Contains(string(r.Body), `"active":true`) {
		t.Errorf("deactivate = %d %s", r.Status, r.Body)
	}
	if r := h.Do("GET", "/membership/config", nil, "X-API-Key", "pk_live_demo_web"); r.Status != 404 || r.Code() != "NO_ACTIVE_CONNECTION" {
		t.Errorf("config with none active = %d %s", r.Status, r.Body)
	}
	for _, tc := range []struct {
		name, path, body string
		status           int
		code             string
	}{
		{"unknown connection", "/projects/demo/connections/nope/active", `{"active":true}`, 404, "NOT_FOUND"},
		{"unknown project", "/projects/nope/connections/main/active", `{"active":true}`, 404, "NOT_FOUND"},
		{"no active field", "/projects/demo/connections/main/active", `{}`, 400, "VALIDATION_FAILED"},
		{"not a boolean", "/projects/demo/connections/main/active", `{"active":"yes"}`, 400, "VALIDATION_FAILED"},
		{"duplicate keys", "/projects/demo/connections/main/active", `{"active":true,"active":false}`, 400, "VALIDATION_FAILED"},
		{"not JSON", "/projects/demo/connections/main/active", `active=true`, 400, ""},
	} {
		r := h.Do("PUT", "/admin/v1"+tc.path, tc.body, "Authorization", "Bearer "+edgetest.AdminToken, "Content-Type", "application/json")
		if r.Status != tc.status || (tc.code != "" && r.Code() != tc.code) {
			t.Errorf("%s: PUT %s = %d %s, want %d %s", tc.name, tc.path, r.Status, r.Body, tc.status, tc.code)
		}
	}
	// The document owns active: applying it again restores main.
	h.Apply(tenants)
	if code, body := config(); code != 200 || !strings.Contains(body, "clerk.example.com") {
		t.Errorf("config after the document is applied again = %d %s, want main's", code, body)
	}
}
