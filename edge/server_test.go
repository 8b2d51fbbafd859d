package edge_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/gofiber/fiber/v2"

	"github.com/gatehouse-dev/gatehouse/edge"
	"github.com/gatehouse-dev/gatehouse/edge/apierr"
	"github.com/gatehouse-dev/gatehouse/edge/auth"
	"github.com/gatehouse-dev/gatehouse/edge/config"
	"github.com/gatehouse-dev/gatehouse/edge/cursor"
	"github.com/gatehouse-dev/gatehouse/edge/edgetest"
	"github.com/gatehouse-dev/gatehouse/edge/httpx"
	"github.com/gatehouse-dev/gatehouse/edge/store"
)

const tenants = `
orgs:
  - slug: acme
    keys:
      - {name: org-pk, value: pk_live_acme_org_only, products: [forms]}
    projects:
      - id: demo
        keys:
          - {name: web, value: pk_live_demo_web, products: [forms, files, records, membership]}
          - {name: server, value: sk_live_demo_server, products: [email, files, records]}
          - {name: member, value: pk_test_demo_member, products: [membership]}
          - {name: old, value: pk_live_demo_revoked, products: [forms], revoked: true}
`

// probe is a product with one route per auth rule, a panic and a cursor route.
type probe struct {
	auth    *auth.Authenticator
	cursors *cursor.Cursors
}

func (p *probe) Segment() string { return "probe" }

func (p *probe) Mount(r fiber.Router) {
	ok := func(c *fiber.Ctx) error {
		k := auth.KeyOf(c)
		return c.JSON(fiber.Map{"org": k.Org, "project": k.Project, "kind": k.Kind})
	}
	p.auth.Handle(r, http.MethodPost, "/secret", auth.Rule{Product: "files", SecretOnly: true, Bearer: true}, ok)
	p.auth.Handle(r, http.MethodGet, "/public", auth.Rule{Product: "files", Bearer: true}, ok)
	p.auth.Handle(r, http.MethodGet, "/forms", auth.Rule{Product: "forms", PublishableOnly: true, NeedProject: true}, ok)
	p.auth.Handle(r, http.MethodGet, "/member", auth.Rule{Product: "membership", PublishableOnly: true, AllowTest: true}, ok)
	p.auth.Handle(r, http.MethodPost, "/small", auth.Rule{Product: "forms"}, httpx.BodyLimit(1024), ok)
	r.Get("/panic", func(c *fiber.Ctx) error { panic("secret internal detail") })
	r.Get("/cursor", func(c *fiber.Ctx) error {
		if cur := c.Query("cursor"); cur != "" {
			payload, err := p.cursors.Decode("probe", cur)
			if err != nil {
				return err
			}
			return c.JSON(httpx.NewList([]string{string(payload)}, ""))
		}
		return c.JSON(httpx.NewList([]string{"first"}, p.cursors.Encode("probe", []byte("second"))))
	})
}

func start(t *testing.T, edit func(*config.Config)) *edgetest.Harness {
	return edgetest.New(t, edgetest.Options{
		Tenants: tenants,
		Config:  edit,
		Products: func(t testing.TB, d edgetest.Deps) []edge.Product {
			cur, err := cursor.NewCursors([]byte("0123456789abcdef0123456789abcdef"))
			if err != nil {
				t.Fatal(err)
			}
			return []edge.Product{&probe{auth: d.Auth, cursors: cur}}
		},
	})
}

func TestAuthRules(t *testing.T) {
	t.Parallel()
	h := start(t, nil)
	h.Run(t, []edgetest.Scenario{
		{Name: "no key", Method: "POST", Path: "/probe/secret", Status: 401, Code: "-"},
		{Name: "malformed key", Method: "POST", Path: "/probe/secret", Key: "hello", Status: 401, Code: "-"},
		{Name: "unknown key", Method: "POST", Path: "/probe/secret", Key: "sk_live_nobody_has_this", Status: 401, Code: "-"},
		{Name: "revoked key", Method: "GET", Path: "/probe/forms", Key: "pk_live_demo_revoked", Status: 401, Code: "-"},
		{Name: "secret on secret route", Method: "POST", Path: "/probe/secret", Key: "sk_live_demo_server", Status: 200},
		{Name: "bearer secret", Method: "POST", Path: "/probe/secret", Headers: []string{"Authorization", "Bearer sk_live_demo_server"}, Status: 200},
		{Name: "publishable on secret route", Method: "POST", Path: "/probe/secret", Key: "pk_live_demo_web", Status: 403, Code: "SECRET_KEY_REQUIRED"},
		{Name: "publishable on public route", Method: "GET", Path: "/probe/public", Key: "pk_live_demo_web", Status: 200},
		{Name: "secret on public route", Method: "GET", Path: "/probe/public", Key: "sk_live_demo_server", Status: 200},
		{Name: "key without the product", Method: "GET", Path: "/probe/public", Key: "pk_live_acme_org_only", Status: 403, Code: "FORBIDDEN"},
		{Name: "org-only key on project route", Method: "GET", Path: "/probe/forms", Key: "pk_live_acme_org_only", Status: 400, Code: "API_KEY_REQUIRES_PROJECT_SCOPE"},
		{Name: "project key on project route", Method: "GET", Path: "/probe/forms", Key: "pk_live_demo_web", Status: 200},
		{Name: "secret key on browser route", Method: "GET", Path: "/probe/forms", Key: "sk_live_demo_server", Status: 403, Code: "FORBIDDEN"},
		{Name: "test key outside membership", Method: "GET", Path: "/probe/forms", Key: "pk_test_demo_member", Status: 403, Code: "FORBIDDEN"},
		{Name: "test key on membership", Method: "GET", Path: "/probe/member", Key: "pk_test_demo_member", Status: 200},
		{Name: "unknown route", Method: "GET", Path: "/nope", Status: 404, Code: "NOT_FOUND"},
	})
}

func TestUnauthorizedHasChallengeAndNoCode(t *testing.T) {
	t.Parallel()
	h := start(t, nil)
	r := h.Do("POST", "/probe/secret", nil)
	if r.Header.Get("WWW-Authenticate") == "" {
		t.Errorf("401 without WWW-Authenticate")
	}
	if m := r.JSON(t); m["message"] == nil || m["error"] != nil {
		t.Errorf("401 body = %s, want only a message", r.Body)
	}
}

func TestCORS(t *testing.T) {
	t.Parallel()
	h := start(t, nil)
	if got := h.Do("GET", "/probe/public", nil, "X-API-Key", "pk_live_demo_web").Header.Get("Access-Control-Allow-Origin"); got != "*" {
		t.Errorf("publishable route Access-Control-Allow-Origin = %q, want *", got)
	}
	if got := h.Do("POST", "/probe/secret", nil, "X-API-Key", "sk_live_demo_server").Header.Get("Access-Control-Allow-Origin"); got != "" {
		t.Errorf("secret route Access-Control-Allow-Origin = %q, want none", got)
	}
	pre := h.Do("OPTIONS", "/probe/public", nil, "Origin", "https://site.example", "Access-Control-Request-Method", "GET")
	if pre.Status != 204 || pre.Header.Get("Access-Control-Allow-Origin") != "*" {
		t.Errorf("preflight = %d %v", pre.Status, pre.Header)
	}
}

func TestRevokeTakesEffectAtOnce(t *testing.T) {
	t.Parallel()
	h := start(t, nil)
	if r := h.Do("GET", "/probe/public", nil, "X-API-Key", "pk_live_demo_web"); r.Status != 200 {
		t.Fatalf("before revoke: %d", r.Status)
	}
	if r := h.Admin("DELETE", "/orgs/acme/projects/demo/keys/web", nil); r.Status != 204 {
		t.Fatalf("revoke: %d %s", r.Status, r.Body)
	}
	if r := h.Do("GET", "/probe/public", nil, "X-API-Key", "pk_live_demo_web"); r.Status != 401 {
		t.Errorf("after revoke: %d, want 401", r.Status)
	}
}

func TestCursorForged(t *testing.T) {
	t.Parallel()
	h := start(t, nil)
	first := h.Do("GET", "/probe/cursor", nil).JSON(t)
	next := first["pagination"].(map[string]any)["nextCursor"].(string)
	if r := h.Do("GET", "/probe/cursor?cursor="+next, nil); r.Status != 200 || !strings.Contains(string(r.Body), `"second"`) || !strings.Contains(string(r.Body), `"nextCursor":null`) {
		t.Errorf("genuine cursor: %d %s", r.Status, r.Body)
	}
	forged := "A" + next[1:]
	if forged == next {
		forged = "B" + next[1:]
	}
	for _, c := range []string{forged, "not-base64!!", "", "AAAA"} {
		if c == "" {
			continue
		}
		if r := h.Do("GET", "/probe/cursor?cursor="+c, nil); r.Status != 400 || r.Code() != "INVALID_CURSOR" {
			t.Errorf("cursor %q: %d %s, want 400 INVALID_CURSOR", c, r.Status, r.Body)
		}
	}
}

func TestBodyTooLarge(t *testing.T) {
	t.Parallel()
	h := start(t, nil)
	r := h.Do("POST", "/probe/small", strings.Repeat("x", 2048), "X-API-Key", "pk_live_demo_web")
	if r.Status != 413 || r.Code() != "" {
		t.Errorf("route limit: %d %s, want 413 without code", r.Status, r.Body)
	}
	// Over the server-wide limit the answer comes before the body is read: send only the
	// headers, as a client would before a large upload.
	conn, err := net.Dial("tcp", strings.TrimPrefix(h.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /probe/small HTTP/1.1\r\nHost: x\r\nX-API-Key: pk_live_demo_web\r\nContent-Length: %d\r\n\r\n", edge.MaxBodyBytes+1)
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 413 || strings.Contains(string(body), `"error"`) {
		t.Errorf("server limit: %d %s, want 413 without code", resp.StatusCode, body)
	}
}

// A document whose changes pass one transaction of the store (here 1 MB memtables: about
// 150 KB) answers 413 with what to do, and changes nothing; its parts apply one by one.
func TestApplyPastOneTransaction(t *testing.T) {
	t.Parallel()
	h := start(t, func(c *config.Config) { c.Storage.MemTableMB = 1 })
	if h.Deps.DB.Backend() == store.BackendPostgres {
		t.Skip("a PostgreSQL transaction takes 40 MB")
	}
	doc := func(from, to int) string {
		var b strings.Builder
		b.WriteString("orgs:\n  - slug: many\n    projects:\n")
		for i := from; i < to; i++ {
			fmt.Fprintf(&b, "      - {id: many-%04d, name: Project number %d of a large organisation}\n", i, i)
		}
		return b.String()
	}
	r := h.Admin("POST", "/apply", doc(0, 2000))
	if r.Status != 413 || r.Code() != "" || !strings.Contains(string(r.Body), "storage.memtable_mb") {
		t.Fatalf("apply of 2,000 projects = %d %s, want 413 naming storage.memtable_mb", r.Status, r.Body)
	}
	if r := h.Admin("GET", "/orgs/many/projects", nil); r.Status != 404 && strings.Contains(string(r.Body), "many-0000") {
		t.Errorf("the refused document left %s", r.Body)
	}
	for from := 0; from < 2000; from += 250 {
		if r := h.Admin("POST", "/apply", doc(from, from+250)); r.Status != 200 {
			t.Fatalf("apply of projects %d-%d = %d %s", from, from+250, r.Status, r.Body)
		}
	}
}

func TestPanicIs500WithoutStack(t *testing.T) {
	t.Parallel()
	h := start(t, nil)
	r := h.Do("GET", "/probe/panic", nil)
	if r.Status != 500 || r.Code() != "INTERNAL" {
		t.Fatalf("panic: %d %s", r.Status, r.Body)
	}
	if strings.Contains(string(r.Body), "secret internal detail") || strings.Contains(string(r.Body), "goroutine") {
		t.Errorf("panic body leaks: %s", r.Body)
	}
	if r := h.Do("GET", "/healthz", nil); r.Status != 200 {
		t.Errorf("after panic /healthz = %d", r.Status)
	}
}

func TestHealthReadyMetrics(t *testing.T) {
	t.Parallel()
	h := start(t, nil)
	for _, p := range []string{"/healthz", "/readyz"} {
		if r := h.Do("GET", p, nil); r.Status != 200 {
			t.Errorf("GET %s = %d", p, r.Status)
		}
	}
	h.Do("GET", "/probe/public", nil, "X-API-Key", "pk_live_demo_web")
	r := h.Do("GET", "/metrics", nil)
	if !strings.Contains(string(r.Body), `gatehouse_http_requests_total{product="probe",route="/probe/public",status="200"} 1`) {
		t.Errorf("metrics lack the request counter:\n%s", r.Body)
	}
	if !strings.Contains(string(r.Body), "gatehouse_http_request_duration_seconds_bucket") {
		t.Errorf("metrics lack the latency histogram")
	}
	if r.Header.Get("X-Request-Id") == "" {
		t.Errorf("no X-Request-Id")
	}
}

func TestAdmin(t *testing.T) {
	t.Parallel()
	off := start(t, func(c *config.Config) { c.AdminToken = "" })
	if r := off.Admin("POST", "/apply", tenants); r.Status != 404 {
		t.Errorf("admin without token configured = %d, want 404", r.Status)
	}
	h := start(t, nil)
	if r := h.Do("POST", "/admin/v1/apply", tenants, "Authorization", "Bearer wrong"); r.Status != 401 {
		t.Errorf("wrong admin token = %d, want 401", r.Status)
	}
	r := h.Admin("POST", "/apply", tenants)
	if r.Status != 200 || r.JSON(t)["changed"] != false {
		t.Errorf("re-apply = %d %s, want no change", r.Status, r.Body)
	}
	bad := strings.Replace(tenants, "pk_live_demo_web", "xk_demo_web", 1) + "\n      - id: other\n"
	r = h.Admin("POST", "/apply", bad)
	if r.Status != 400 || r.Code() != "VALIDATION_FAILED" || !strings.Contains(string(r.Body), "orgs[0].projects[0].keys[0]: value must start with pk_live_, pk_test_ or sk_live_") {
		t.Errorf("bad apply = %d %s", r.Status, r.Body)
	}
	if r := h.Admin("GET", "/orgs/acme/keys", nil); r.Status != 200 || strings.Contains(string(r.Body), "pk_live_demo_web") {
		t.Errorf("key list = %d %s (must not show values)", r.Status, r.Body)
	}
	r = h.Admin("POST", "/keys", map[string]any{"org": "acme", "project": "demo", "kind": "publishable", "products": []string{"files"}})
	val, _ := r.JSON(t)["value"].(string)
	if r.Status != 201 || !strings.HasPrefix(val, "pk_live_") {
		t.Fatalf("create key = %d %s", r.Status, r.Body)
	}
	if r := h.Do("GET", "/probe/public", nil, "X-API-Key", val); r.Status != 200 {
		t.Errorf("new key = %d %s", r.Status, r.Body)
	}
}

func TestHostRouting(t *testing.T) {
	t.Parallel()
	h := start(t, func(c *config.Config) { c.AssetHost = "http://cdn.gatehouse.test" })
	// The asset host's own host name reaches the /cdn mount (here unmounted: the 404 body
	// shows the rewritten route was tried).
	r := h.Do("GET", "/x/y.png", nil, "Host", "cdn.gatehouse.test")
	if r.Status != 404 {
		t.Errorf("asset host = %d", r.Status)
	}
	if r := h.Do("GET", "/healthz", nil, "Host", "cdn.gatehouse.test"); r.Status != 404 {
		t.Errorf("asset host /healthz = %d, want 404 (only /cdn lives there)", r.Status)
	}
}

func TestCompressedBodyRefused(t *testing.T) {
	t.Parallel()
	h := start(t, nil)
	r := h.Do("POST", "/probe/small", "x", "X-API-Key", "pk_live_demo_web", "Content-Encoding", "gzip")
	if r.Status != 415 || r.Code() != "UNSUPPORTED_CONTENT_ENCODING" {
		t.Errorf("gzip body = %d %s, want 415 UNSUPPORTED_CONTENT_ENCODING", r.Status, r.Body)
	}
}

// TestMalformedRequests: requests the HTTP layer refuses before any route still get the
// envelope: 400 VALIDATION_FAILED with details, other statuses their own code, never the
// parser's text and never VALIDATION_FAILED with a status other than 400.
func TestMalformedRequests(t *testing.T) {
	t.Parallel()
	h := start(t, nil)
	tests := []struct {
		name   string
		raw    string
		status int
		code   string
	}{
		{"bad content length", "GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n", 400, "VALIDATION_FAILED"},
		{"bad request line", "BLAH\r\n\r\n", 400, "VALIDATION_FAILED"},
		{"huge header", "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: " + strings.Repeat("a", 9000) + "\r\n\r\n", 431, "HEADERS_TOO_LARGE"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			conn, err := net.Dial("tcp", strings.TrimPrefix(h.URL, "http://"))
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			if _, err := io.WriteString(conn, tc.raw); err != nil {
				t.Fatal(err)
			}
			resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
			if err != nil {
				t.Fatalf("%s: reading the answer: %v", tc.name, err)
			}
			body, _ := io.ReadAll(resp.Body)
			r := &edgetest.Response{Status: resp.StatusCode, Header: resp.Header, Body: body}
			if r.Status != tc.status || r.Code() != tc.code {
				t.Fatalf("%s = %d %s, want %d %s", tc.name, r.Status, body, tc.status, tc.code)
			}
			if tc.status == http.StatusRequestHeaderFieldsTooLarge {
				// Answered before routing: the document lists it on every operation.
				req := httptest.NewRequest(http.MethodGet, "/healthz", nil)
				if msg := edgetest.CheckContract(req, r.Status, r.Header, body, nil); msg != "" {
					t.Errorf("%s: %s", tc.name, msg)
				}
			}
			if tc.code == "VALIDATION_FAILED" {
				var b struct{ Details []apierr.FieldProblem }
				if err := json.Unmarshal(body, &b); err != nil || len(b.Details) == 0 {
					t.Errorf("%s: VALIDATION_FAILED without details: %s", tc.name, body)
				}
			}
			if strings.Contains(string(body), "Content-Length") || strings.Contains(string(body), "Request Header Fields") {
				t.Errorf("%s: body carries the parser's text: %s", tc.name, body)
			}
		})
	}
}

// TestTooLargeBodyReachesClient: a real client sending a body over a route's limit or over
// the server's limit reads the 413 answer, never a connection reset, every time.
func TestTooLargeBodyReachesClient(t *testing.T) {
	t.Parallel()
	h := start(t, nil)
	for _, size := range []int{256 << 10, 4 << 20, edge.MaxBodyBytes + 4<<20} {
		for i := range 10 {
			req, err := http.NewRequest("POST", h.URL+"/probe/small", bytes.NewReader(make([]byte, size)))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("X-API-Key", "pk_live_demo_web")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatalf("POST %d bytes (try %d): %v, want the 413 answer", size, i, err)
			}
			body, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil || resp.StatusCode != 413 || strings.Contains(string(body), `"error"`) {
				t.Fatalf("POST %d bytes (try %d) = %d %s %v, want 413 without code", size, i, resp.StatusCode, body, err)
			}
		}
	}
}

// TestUnknownMethodHasEnvelope: a method no route knows gets the JSON envelope, not text.
func TestUnknownMethodHasEnvelope(t *testing.T) {
	t.Parallel()
	h := start(t, nil)
	for _, m := range []string{"FOO", "PROPFIND", "get"} {
		r := h.Do(m, "/probe/public", nil, "X-API-Key", "pk_live_demo_web")
		if r.Status != 405 || r.Code() != "METHOD_NOT_ALLOWED" || r.Header.Get("Allow") == "" || !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
			t.Errorf("%s /probe/public = %d %v %s, want 405 METHOD_NOT_ALLOWED with Allow", m, r.Status, r.Header, r.Body)
		}
	}
	// Known methods keep their routes.
	if r := h.Do("GET", "/probe/public", nil, "X-API-Key", "pk_live_demo_web"); r.Status != 200 {
		t.Errorf("GET after unknown methods = %d", r.Status)
	}
}

// GET /openapi.json answers the OpenAPI document without a key, on the main host only.
func TestOpenAPIServed(t *testing.T) {
	t.Parallel()
	h := start(t, func(c *config.Config) { c.AssetHost = "http://assets.test" })
	r := h.Do("GET", "/openapi.json", nil)
	if r.Status != 200 || !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		t.Fatalf("GET /openapi.json = %d %s", r.Status, r.Header.Get("Content-Type"))
	}
	if v, _ := r.JSON(t)["openapi"].(string); v != "3.1.0" {
		t.Errorf("GET /openapi.json: openapi = %q, want 3.1.0", v)
	}
	if r := h.Do("GET", "/openapi.json", nil, "Host", "assets.test"); r.Status != 404 {
		t.Errorf("GET /openapi.json on the asset host = %d, want 404", r.Status)
	}
}

// GET /docs/ answers the reference page: HTML that loads only the gateway's own files (the
// embedded Redoc bundle) and the document at ../openapi.json, under a CSP that names no other
// host; GET /docs redirects to it.
func TestReferencePage(t *testing.T) {
	t.Parallel()
	h := start(t, nil)
	r := h.Do("GET", "/docs/", nil)
	if r.Status != 200 || !strings.HasPrefix(r.Header.Get("Content-Type"), "text/html") {
		t.Fatalf("GET /docs/ = %d %s", r.Status, r.Header.Get("Content-Type"))
	}
	refs := regexp.MustCompile(`(?i)(?:src|href|spec-url)\s*=\s*"([^"]*)"`).FindAllStringSubmatch(string(r.Body), -1)
	if len(refs) < 2 {
		t.Fatalf("GET /docs/ references %d files: %s", len(refs), r.Body)
	}
	sawSpec := false
	for _, m := range refs {
		ref := m[1]
		sawSpec = sawSpec || ref == "../openapi.json"
		if strings.Contains(ref, "//") || strings.HasPrefix(ref, "/") && !strings.HasPrefix(ref, "/docs/") {
			t.Errorf("GET /docs/ references %q, not a file of the gateway's /docs/", ref)
			continue
		}
		if strings.HasPrefix(ref, "data:") {
			continue
		}
		page, _ := url.Parse("/docs/")
		target, err := url.Parse(ref)
		if err != nil {
			t.Errorf("GET /docs/ references %q: %v", ref, err)
			continue
		}
		if got := h.Do("GET", page.ResolveReference(target).String(), nil); got.Status != 200 {
			t.Errorf("GET %s (referenced by the page) = %d", page.ResolveReference(target), got.Status)
		}
	}
	if !sawSpec {
		t.Errorf("GET /docs/ does not load ../openapi.json: %s", r.Body)
	}
	csp := r.Header.Get("Content-Security-Policy")
	if !strings.Contains(csp, "default-src 'none'") || strings.Contains(csp, "http") {
		t.Errorf("GET /docs/ CSP = %q, want one that names no other host", csp)
	}
	js := h.Do("GET", "/docs/redoc.standalone.js", nil, "Accept-Encoding", "identity")
	if js.Status != 200 || !strings.HasPrefix(js.Header.Get("Content-Type"), "text/javascript") || !strings.Contains(string(js.Body), "RedocStandalone") {
		t.Errorf("GET /docs/redoc.standalone.js = %d %s (%d bytes)", js.Status, js.Header.Get("Content-Type"), len(js.Body))
	}
	req, _ := http.NewRequest("GET", h.URL+"/docs", nil)
	resp, err := (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 301 || resp.Header.Get("Location") != "/docs/" {
		t.Errorf("GET /docs = %d Location %q, want 301 to /docs/", resp.StatusCode, resp.Header.Get("Location"))
	}
}
