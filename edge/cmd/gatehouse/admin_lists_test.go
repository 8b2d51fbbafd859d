package main

import (
	"strings"
	"testing"
)

// listTenants: one project with a webhook (with its secret) and a membership connection (with
// the identity provider's secret); the admin lists must name both and show neither secret.
const listTenants = `
orgs:
  - slug: acme
    projects:
      - id: acme-site
        webhooks:
          - name: main
            url: https://hooks.acme.test/in
            events: [form.submitted, email.delivered]
            secret: whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw
        membership:
          connections:
            - name: main
              active: true
              idpPublishableKey: pk_test_Y2xlcmsuZXhhbXBsZS5jb20k
              idpInstanceDomain: clerk.example.com
              idpSecretKey: sk_test_idp_never_listed
`

// The webhook and connection lists through the wired gateway: names, url, events and the
// active flag; no secret; a project without any lists nothing.
func TestAdminListsWithoutSecrets(t *testing.T) {
	t.Parallel()
	g := startGateway(t, listTenants)
	hooks := g.admin(t, "GET", "/projects/acme-site/webhooks", "")
	if want := `{"items":[{"name":"main","url":"https://hooks.acme.test/in","events":["form.submitted","email.delivered"]}],"pagination":{"nextCursor":null}}`; hooks != want {
		t.Errorf("webhooks = %s, want %s", hooks, want)
	}
	conns := g.admin(t, "GET", "/projects/acme-site/connections", "")
	if !strings.Contains(conns, `"name":"main","active":true`) || !strings.Contains(conns, `"hasIdpSecretKey":true`) {
		t.Errorf("connections = %s", conns)
	}
	for _, body := range []string{hooks, conns} {
		for _, secret := range []string{"whsec_", "sk_test_idp_never_listed", `"secret"`, `"idpSecretKey"`} {
			if strings.Contains(body, secret) {
				t.Errorf("admin list holds %q: %s", secret, body)
			}
		}
	}
	if code, body := g.call(t, "GET", "/admin/v1/projects/acme-site/webhooks", "", ""); code != 401 {
		t.Errorf("webhooks without credentials = %d %s", code, body)
	}
}
