package membership_test

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/edge"
	"github.com/gatehouse-dev/gatehouse/edge/edgetest"
	"github.com/gatehouse-dev/gatehouse/products/membership"
)

const tenants = `
orgs:
  - slug: acme
    keys:
      - {name: org-member, value: pk_live_acme_org_member, products: [membership]}
    projects:
      - id: demo
        keys:
          - {name: web, value: pk_live_demo_web, products: [forms, files, records, membership]}
          - {name: server, value: sk_live_demo_server, products: [email, files, records]}
          - {name: member, value: pk_test_demo_member, products: [membership]}
          - {name: forms-only, value: pk_live_demo_forms, products: [forms]}
          - {name: old, value: pk_live_demo_revoked, products: [membership], revoked: true}
        membership:
          connections:
            - name: main
              active: true
              idpPublishableKey: pk_test_Y2xlcmsuZXhhbXBsZS5jb20k
              idpInstanceDomain: clerk.example.com
              idpSecretKey: sk_test_never_returned
              signUpEnabled: true
              organizationsEnabled: false
              appearance: {variables: {colorPrimary: "#0f766e"}}
            - name: next
              active: false
              idpPublishableKey: pk_live_Y2xlcmsubmV4dC5leGFtcGxlJA
              idpInstanceDomain: next.example
              idpSecretKey: sk_live_next_secret
              signUpEnabled: false
              organizationsEnabled: true
      - id: bare
        keys:
          - {name: web, value: pk_live_bare_web, products: [membership]}
        membership:
          connections:
            - name: retired
              active: false
              idpPublishableKey: pk_test_Y2xlcmsuZXhhbXBsZS5jb20k
              idpInstanceDomain: clerk.example.com
      - id: empty
        keys:
          - {name: web, value: pk_test_empty_member, products: [membership]}
`

func start(t *testing.T) *edgetest.Harness {
	t.Helper()
	return edgetest.New(t, edgetest.Options{
		Tenants: tenants,
		Products: func(t testing.TB, d edgetest.Deps) []edge.Product {
			svc := newService(t, d)
			return []edge.Product{membership.NewAPI(svc, d.Auth)}
		},
	})
}

func TestConfigAuthAndErrors(t *testing.T) {
	t.Parallel()
	h := start(t)
	h.Run(t, []edgetest.Scenario{
		{Name: "live publishable key", Method: "GET", Path: "/membership/config", Key: "pk_live_demo_web", Status: 200, Code: "-"},
		{Name: "test publishable key", Method: "GET", Path: "/membership/config", Key: "pk_test_demo_member", Status: 200, Code: "-"},
		{Name: "no key", Method: "GET", Path: "/membership/config", Status: 401, Code: "-"},
		{Name: "malformed key", Method: "GET", Path: "/membership/config", Key: "clerk_pk_nope", Status: 401, Code: "-"},
		{Name: "unknown key", Method: "GET", Path: "/membership/config", Key: "pk_live_nobody_has_this", Status: 401, Code: "-"},
		{Name: "revoked key", Method: "GET", Path: "/membership/config", Key: "pk_live_demo_revoked", Status: 401, Code: "-"},
		{Name: "key without membership", Method: "GET", Path: "/membership/config", Key: "pk_live_demo_forms", Status: 403, Code: "FORBIDDEN"},
		{Name: "secret key", Method: "GET", Path: "/membership/config", Key: "sk_live_demo_server", Status: 403, Code: "FORBIDDEN"},
		{Name: "org-only key", Method: "GET", Path: "/membership/config", Key: "pk_live_acme_org_member", Status: 400, Code: "API_KEY_REQUIRES_PROJECT_SCOPE"},
		{Name: "only inactive connections", Method: "GET", Path: "/membership/config", Key: "pk_live_bare_web", Status: 404, Code: "NO_ACTIVE_CONNECTION"},
		{Name: "no connections at all", Method: "GET", Path: "/membership/config", Key: "pk_test_empty_member", Status: 404, Code: "NO_ACTIVE_CONNECTION"},
		{Name: "head", Method: "HEAD", Path: "/membership/config", Key: "pk_live_demo_web", Status: 200},
		{Name: "head without key", Method: "HEAD", Path: "/membership/config", Status: 401},
		{Name: "other method", Method: "POST", Path: "/membership/config", Key: "pk_live_demo_web", Status: 404, Code: "NOT_FOUND"},
		{Name: "unknown route", Method: "GET", Path: "/membership/connections", Key: "pk_live_demo_web", Status: 404, Code: "NOT_FOUND"},
	})
}

func TestConfigExactlyFiveFieldsNoSecret(t *testing.T) {
	t.Parallel()
	h := start(t)
	r := h.Do("GET", "/membership/config", nil, "X-API-Key", "pk_test_demo_member")
	if r.Status != 200 {
		t.Fatalf("GET /membership/config = %d %s", r.Status, r.Body)
	}
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Errorf("Content-Type = %q, want application/json", ct)
	}
	var got map[string]any
	if err := json.Unmarshal(r.Body, &got); err != nil {
		t.Fatalf("body %s: %v", r.Body, err)
	}
	want := map[string]any{
		"idpPublishableKey":    "pk_test_Y2xlcmsuZXhhbXBsZS5jb20k",
		"idpInstanceDomain":    "clerk.example.com",
		"appearance":           map[string]any{"variables": map[string]any{"colorPrimary": "#0f766e"}},
		"signUpEnabled":        true,
		"organizationsEnabled": false,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("GET /membership/config body = %v, want %v", got, want)
	}
	if strings.Contains(string(r.Body), "never_returned") || strings.Contains(strings.ToLower(string(r.Body)), "secret") {
		t.Errorf("body leaks the secret: %s", r.Body)
	}
	// The served struct has no place for a secret at all.
	typ := reflect.TypeOf(membership.Config{})
	if typ.NumField() != 5 {
		t.Errorf("membership.Config has %d fields, want exactly 5", typ.NumField())
	}
	for i := 0; i < typ.NumField(); i++ {
		if f := typ.Field(i); strings.Contains(strings.ToLower(f.Name+f.Tag.Get("json")), "secret") {
			t.Errorf("membership.Config has field %s", f.Name)
		}
	}
}

func TestConfigAppearanceNullWhenUnset(t *testing.T) {
	t.Parallel()
	h := start(t)
	h.Apply(`
orgs:
  - slug: acme
    projects:
      - id: demo
        membership:
          connections:
            - {name: main, active: false, idpPublishableKey: pk_test_Y2xlcmsuZXhhbXBsZS5jb20k, idpInstanceDomain: clerk.example.com}
            - {name: next, active: true, idpPublishableKey: pk_live_Y2xlcmsubmV4dC5leGFtcGxlJA, idpInstanceDomain: next.example, organizationsEnabled: true}
`)
	r := h.Do("GET", "/membership/config", nil, "X-API-Key", "pk_live_demo_web")
	want := `{"idpPublishableKey":"pk_live_Y2xlcmsubmV4dC5leGFtcGxlJA","idpInstanceDomain":"next.example","appearance":null,"signUpEnabled":false,"organizationsEnabled":true}`
	if r.Status != 200 || string(r.Body) != want {
		t.Errorf("GET /membership/config = %d %s, want 200 %s", r.Status, r.Body, want)
	}
}

func TestConfigCachingHeaders(t *testing.T) {
	t.Parallel()
	h := start(t)
	key := []string{"X-API-Key", "pk_live_demo_web"}
	first := h.Do("GET", "/membership/config", nil, key...)
	etag := first.Header.Get("ETag")
	if first.Status != 200 || etag == "" || !strings.HasPrefix(etag, `"`) {
		t.Fatalf("first GET = %d, ETag %q; want 200 with a strong ETag", first.Status, etag)
	}
	if cc := first.Header.Get("Cache-Control"); cc != membership.CacheControl {
		t.Errorf("Cache-Control = %q, want %q", cc, membership.CacheControl)
	}
	if v := first.Header.Get("Vary"); !strings.Contains(v, "X-API-Key") {
		t.Errorf("Vary = %q, want it to name X-API-Key", v)
	}
	if again := h.Do("GET", "/membership/config", nil, key...); again.Header.Get("ETag") != etag || string(again.Body) != string(first.Body) {
		t.Errorf("second GET: ETag %q body %s, want the same %q %s", again.Header.Get("ETag"), again.Body, etag, first.Body)
	}
	cases := []struct {
		name, ifNoneMatch string
		status            int
	}{
		{"same tag", etag, 304},
		{"weak form of the tag", "W/" + etag, 304},
		{"tag in a list", `"other", ` + etag, 304},
		{"star", "*", 304},
		{"other tag", `"other"`, 200},
		{"unquoted garbage", "garbage", 200},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := h.Do("GET", "/membership/config", nil, append(key, "If-None-Match", tc.ifNoneMatch)...)
			if r.Status != tc.status {
				t.Fatalf("GET with If-None-Match %q = %d, want %d", tc.ifNoneMatch, r.Status, tc.status)
			}
			if r.Status == 304 && len(r.Body) != 0 {
				t.Errorf("304 has a body: %s", r.Body)
			}
			if r.Header.Get("ETag") != etag || r.Header.Get("Cache-Control") != membership.CacheControl || r.Header.Get("Access-Control-Allow-Origin") != "*" {
				t.Errorf("headers = %v, want ETag %s, Cache-Control and Access-Control-Allow-Origin", r.Header, etag)
			}
		})
	}
}

func TestConfigCORS(t *testing.T) {
	t.Parallel()
	h := start(t)
	origin := []string{"Origin", "https://site.example"}
	for _, tc := range []struct {
		name, key string
		status    int
	}{
		{"ok", "pk_test_demo_member", 200},
		{"no active connection", "pk_live_bare_web", 404},
		{"no key", "", 401},
		{"wrong product", "pk_live_demo_forms", 403},
		{"org-only key", "pk_live_acme_org_member", 400},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			hdr := origin
			if tc.key != "" {
				hdr = append([]string{"X-API-Key", tc.key}, origin...)
			}
			r := h.Do("GET", "/membership/config", nil, hdr...)
			if r.Status != tc.status || r.Header.Get("Access-Control-Allow-Origin") != "*" {
				t.Errorf("GET /membership/config (%s) = %d, Access-Control-Allow-Origin %q; want %d and *", tc.name, r.Status, r.Header.Get("Access-Control-Allow-Origin"), tc.status)
			}
		})
	}
	pre := h.Do("OPTIONS", "/membership/config", nil, append(origin, "Access-Control-Request-Method", "GET", "Access-Control-Request-Headers", "x-api-key")...)
	if pre.Status != 204 || pre.Header.Get("Access-Control-Allow-Origin") != "*" || !strings.Contains(pre.Header.Get("Access-Control-Allow-Headers"), "X-API-Key") {
		t.Errorf("preflight = %d %v", pre.Status, pre.Header)
	}
	if r := h.Do("GET", "/membership/config", nil, "X-API-Key", "pk_live_bare_web"); r.Header.Get("Cache-Control") != "no-store" {
		t.Errorf("404 Cache-Control = %q, want no-store", r.Header.Get("Cache-Control"))
	}
}

// TestConfigSwitchesOnApply activates another connection through apply and through the admin
// API and expects the very next answer to be the new one (the cache is invalidated).
func TestConfigSwitchesOnApply(t *testing.T) {
	t.Parallel()
	h := start(t)
	key := []string{"X-API-Key", "pk_live_demo_web"}
	domain := func() (int, string) {
		r := h.Do("GET", "/membership/config", nil, key...)
		var c membership.Config
		_ = json.Unmarshal(r.Body, &c)
		return r.Status, c.IdpInstanceDomain
	}
	if s, d := domain(); s != 200 || d != "clerk.example.com" {
		t.Fatalf("before: %d %q", s, d)
	}
	before := h.Do("GET", "/membership/config", nil, key...).Header.Get("ETag")
	switchTo := func(active string) string {
		return `
orgs:
  - slug: acme
    projects:
      - id: demo
        membership:
          connections:
            - {name: main, active: ` + boolStr(active == "main") + `, idpPublishableKey: pk_test_Y2xlcmsuZXhhbXBsZS5jb20k, idpInstanceDomain: clerk.example.com, idpSecretKey: sk_test_never_returned, signUpEnabled: true, appearance: {variables: {colorPrimary: "#0f766e"}}}
            - {name: next, active: ` + boolStr(active == "next") + `, idpPublishableKey: pk_live_Y2xlcmsubmV4dC5leGFtcGxlJA, idpInstanceDomain: next.example, idpSecretKey: sk_live_next_secret, organizationsEnabled: true}
`
	}
	h.Apply(switchTo("next"))
	if s, d := domain(); s != 200 || d != "next.example" {
		t.Errorf("after activating next through the service: %d %q, want 200 next.example", s, d)
	}
	r := h.Do("GET", "/membership/config", nil, append(key, "If-None-Match", before)...)
	if r.Status != 200 || r.Header.Get("ETag") == before {
		t.Errorf("revalidating the old ETag after the switch = %d (ETag %q), want 200 with a new ETag", r.Status, r.Header.Get("ETag"))
	}
	if a := h.Admin("POST", "/apply", switchTo("none")); a.Status != 200 {
		t.Fatalf("admin apply: %d %s", a.Status, a.Body)
	}
	if r := h.Do("GET", "/membership/config", nil, key...); r.Status != 404 || r.Code() != "NO_ACTIVE_CONNECTION" {
		t.Errorf("after deactivating every connection: %d %s, want 404 NO_ACTIVE_CONNECTION", r.Status, r.Body)
	}
	if a := h.Admin("POST", "/apply", switchTo("main")); a.Status != 200 {
		t.Fatalf("admin apply: %d %s", a.Status, a.Body)
	}
	if s, d := domain(); s != 200 || d != "clerk.example.com" {
		t.Errorf("after reactivating main through the admin API: %d %q", s, d)
	}
}

// TestConfigPrunedConnection deletes the active connection with prune: the answer becomes 404.
func TestConfigPrunedConnection(t *testing.T) {
	t.Parallel()
	h := start(t)
	key := []string{"X-API-Key", "pk_test_demo_member"}
	if r := h.Do("GET", "/membership/config", nil, key...); r.Status != 200 {
		t.Fatalf("before: %d %s", r.Status, r.Body)
	}
	// The same document cut before demo's membership section: every connection goes.
	h.Apply("prune: true\n" + strings.SplitN(tenants, "        membership:", 2)[0])
	if r := h.Do("GET", "/membership/config", nil, key...); r.Status != 404 || r.Code() != "NO_ACTIVE_CONNECTION" {
		t.Errorf("after pruning the connections: %d %s, want 404 NO_ACTIVE_CONNECTION", r.Status, r.Body)
	}
}

func boolStr(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

func TestConfigHeadMatchesGet(t *testing.T) {
	t.Parallel()
	h := start(t)
	get := h.Do("GET", "/membership/config", nil, "X-API-Key", "pk_live_demo_web")
	head := h.Do("HEAD", "/membership/config", nil, "X-API-Key", "pk_live_demo_web")
	if head.Status != 200 || len(head.Body) != 0 || head.Header.Get("ETag") != get.Header.Get("ETag") || head.Header.Get("Cache-Control") != membership.CacheControl {
		t.Errorf("HEAD /membership/config = %d %v body %q; want 200, the GET's ETag %s and no body", head.Status, head.Header, head.Body, get.Header.Get("ETag"))
	}
}

// TestConfigSurvivesRestart applies a switch, restarts the gateway on the same data folder and
// expects the switched answer from the fresh (empty) cache.
func TestConfigSurvivesRestart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	opts := edgetest.Options{
		Dir:     dir,
		Tenants: tenants,
		Products: func(t testing.TB, d edgetest.Deps) []edge.Product {
			svc := newService(t, d)
			return []edge.Product{membership.NewAPI(svc, d.Auth)}
		},
	}
	first := edgetest.New(t, opts)
	if r := first.Admin("POST", "/apply", strings.Replace(tenants, "active: true", "active: false", 1)); r.Status != 200 {
		t.Fatalf("apply: %d %s", r.Status, r.Body)
	}
	_ = first.Server.Shutdown(context.Background())
	_ = first.DB.Close()
	opts.Tenants = ""
	second := edgetest.New(t, opts)
	if r := second.Do("GET", "/membership/config", nil, "X-API-Key", "pk_live_demo_web"); r.Status != 404 || r.Code() != "NO_ACTIVE_CONNECTION" {
		t.Errorf("after restart: %d %s, want 404 NO_ACTIVE_CONNECTION", r.Status, r.Body)
	}
}

// newService builds the product's service over the harness and joins it to tenancy, as
// edge/cmd/gatehouse does.
func newService(t testing.TB, d edgetest.Deps) *membership.Service {
	t.Helper()
	svc, err := membership.NewService(membership.Options{DB: d.DB, Notify: d.Tenancy})
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Tenancy.Add(svc); err != nil {
		t.Fatal(err)
	}
	return svc
}
