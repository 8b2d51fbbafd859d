package membership_test

import (
	"strings"
	"testing"
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
