package auth_test

import (
	"net/http"
	"testing"

	"github.com/gofiber/fiber/v2"

	"github.com/gatehouse-dev/gatehouse/edge"
	"github.com/gatehouse-dev/gatehouse/edge/auth"
	"github.com/gatehouse-dev/gatehouse/edge/edgetest"
)

const corsTenants = `
orgs:
  - slug: acme
    keys:
      - {name: org-member, value: pk_live_acme_org_member, products: [membership]}
    projects:
      - id: demo
        keys:
          - {name: web, value: pk_live_demo_web, products: [forms, membership]}
          - {name: server, value: sk_live_demo_server, products: [email]}
          - {name: member, value: pk_test_demo_member, products: [membership]}
`

// corsProbe has one publishable-key route and one secret-only route.
type corsProbe struct{ auth *auth.Authenticator }

func (p *corsProbe) Segment() string { return "probe" }

func (p *corsProbe) Mount(r fiber.Router) {
	ok := func(c *fiber.Ctx) error { return c.SendStatus(http.StatusOK) }
	p.auth.Handle(r, http.MethodGet, "/browser", auth.Rule{Product: "membership", PublishableOnly: true, AllowTest: true, NeedProject: true}, ok)
	p.auth.Handle(r, http.MethodPost, "/server", auth.Rule{Product: "email", SecretOnly: true}, ok)
	p.auth.Handle(r, http.MethodGet, "/bearer", auth.Rule{Product: "membership", AllowTest: true, Bearer: true}, ok)
}

// TestCORSOnRefusals checks that a publishable-key route's refusals are readable by a page
// (Access-Control-Allow-Origin: *) and that a secret-only route never sends the header.
func TestCORSOnRefusals(t *testing.T) {
	t.Parallel()
	h := edgetest.New(t, edgetest.Options{
		Tenants: corsTenants,
		Products: func(t testing.TB, d edgetest.Deps) []edge.Product {
			return []edge.Product{&corsProbe{auth: d.Auth}}
		},
	})
	cases := []struct {
		name, method, path, key string
		status                  int
		code, allowOrigin       string
		wwwAuth                 string // expected WWW-Authenticate on a 401
	}{
		{"browser ok", "GET", "/probe/browser", "pk_test_demo_member", 200, "", "*", ""},
		{"browser no key", "GET", "/probe/browser", "", 401, "", "*", `ApiKey header="X-API-Key"`},
		{"browser unknown key", "GET", "/probe/browser", "pk_live_nobody_has_this", 401, "", "*", `ApiKey header="X-API-Key"`},
		{"bearer route no key", "GET", "/probe/bearer", "", 401, "", "*", `ApiKey header="X-API-Key", Bearer`},
		{"bearer route ok", "GET", "/probe/bearer", "pk_test_demo_member", 200, "", "*", ""},
		{"browser wrong product", "GET", "/probe/browser", "sk_live_demo_server", 403, "FORBIDDEN", "*", ""},
		{"browser org-only key", "GET", "/probe/browser", "pk_live_acme_org_member", 400, "API_KEY_REQUIRES_PROJECT_SCOPE", "*", ""},
		{"server ok", "POST", "/probe/server", "sk_live_demo_server", 200, "", "", ""},
		{"server no key", "POST", "/probe/server", "", 401, "", "", `ApiKey header="X-API-Key"`},
		{"server publishable key", "POST", "/probe/server", "pk_live_demo_web", 403, "SECRET_KEY_REQUIRED", "", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var hdr []string
			if tc.key != "" {
				hdr = []string{"X-API-Key", tc.key}
			}
			r := h.Do(tc.method, tc.path, nil, append(hdr, "Origin", "https://site.example")...)
			if r.Status != tc.status || r.Code() != tc.code {
				t.Errorf("%s %s = %d %q, want %d %q; body %s", tc.method, tc.path, r.Status, r.Code(), tc.status, tc.code, r.Body)
			}
			if got := r.Header.Get("Access-Control-Allow-Origin"); got != tc.allowOrigin {
				t.Errorf("%s %s: Access-Control-Allow-Origin = %q, want %q", tc.method, tc.path, got, tc.allowOrigin)
			}
			wantExpose := ""
			if tc.allowOrigin == "*" {
				wantExpose = auth.ExposedHeaders
			}
			if got := r.Header.Get("Access-Control-Expose-Headers"); got != wantExpose {
				t.Errorf("%s %s: Access-Control-Expose-Headers = %q, want %q", tc.method, tc.path, got, wantExpose)
			}
			if got := r.Header.Get("WWW-Authenticate"); tc.status == 401 && got != tc.wwwAuth {
				t.Errorf("%s %s: WWW-Authenticate = %q, want %q", tc.method, tc.path, got, tc.wwwAuth)
			}
		})
	}
}

// TestPreflightOnSecretOnlyRoute: a preflight to a secret-only route is answered 204 without
// Access-Control-Allow-Origin (so browsers stay out), not 404.
func TestPreflightOnSecretOnlyRoute(t *testing.T) {
	t.Parallel()
	h := edgetest.New(t, edgetest.Options{
		Tenants: corsTenants,
		Products: func(t testing.TB, d edgetest.Deps) []edge.Product {
			return []edge.Product{&corsProbe{auth: d.Auth}}
		},
	})
	r := h.Do("OPTIONS", "/probe/server", nil, "Origin", "https://site.example", "Access-Control-Request-Method", "POST")
	if r.Status != 204 || r.Header.Get("Access-Control-Allow-Origin") != "" || r.Header.Get("Access-Control-Allow-Methods") != "" {
		t.Errorf("secret-only preflight = %d %v, want 204 without CORS headers", r.Status, r.Header)
	}
	r = h.Do("OPTIONS", "/probe/browser", nil, "Origin", "https://site.example", "Access-Control-Request-Method", "GET")
	if r.Status != 204 || r.Header.Get("Access-Control-Allow-Origin") != "*" {
		t.Errorf("publishable preflight = %d %v, want 204 with Access-Control-Allow-Origin: *", r.Status, r.Header)
	}
}
