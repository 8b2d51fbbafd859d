package main

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/gatehouse-dev/gatehouse/edge"
	"github.com/gatehouse-dev/gatehouse/edge/accounts"
	"github.com/gatehouse-dev/gatehouse/edge/auth"
	"github.com/gatehouse-dev/gatehouse/edge/blob"
	"github.com/gatehouse-dev/gatehouse/edge/config"
	"github.com/gatehouse-dev/gatehouse/edge/cursor"
	"github.com/gatehouse-dev/gatehouse/edge/edgetest"
	"github.com/gatehouse-dev/gatehouse/edge/edgetest/storetest"
	"github.com/gatehouse-dev/gatehouse/edge/journal"
	"github.com/gatehouse-dev/gatehouse/edge/secrets"
	"github.com/gatehouse-dev/gatehouse/edge/store"
	"github.com/gatehouse-dev/gatehouse/edge/tenancy"
)

// gateway is the whole gateway, wired as serve wires it, on a loopback port in this process
// (so that a test can walk its registered routes).
type gateway struct {
	url   string
	token string
	srv   *edge.Server
	users *accounts.Service
}

const (
	scopeToken       = "scope-admin-token"
	testUserPassword = "a test password"
)

func startGateway(t *testing.T, tenants string) *gateway {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	d := testDeps(t, dir, ln.Addr().String())
	d.cfg.AdminToken = scopeToken
	cfg, log, db, ten := d.cfg, d.log, d.db, d.tenancy
	app, err := wire(ctx, d)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := tenancy.Parse([]byte(tenants))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ten.Apply(ctx, doc); err != nil {
		t.Fatal(err)
	}
	srv, err := app.server(cfg, log, prometheus.NewRegistry(), nil)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { defer close(done); _ = srv.Serve(ln) }()
	if err := app.start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
		_ = ln.Close()
		<-done
		_ = app.stop(sctx)
		_ = app.close()
		_ = db.Close()
	})
	// The dashboard accounts are in the store: the test's own service over it sees the gateway's.
	users, err := accounts.NewService(accounts.Options{DB: db})
	if err != nil {
		t.Fatal(err)
	}
	return &gateway{url: cfg.PublicURL, token: scopeToken, srv: srv, users: users}
}

// testDeps opens what serve gives wire, over the data folder dir, for a server listening on
// addr: the store (the backend GATEHOUSE_TEST_STORE names), tenancy, keys, cursors and blobs.
// The caller closes d.db.
func testDeps(t *testing.T, dir, addr string) deps {
	t.Helper()
	ctx := context.Background()
	cfg := config.Default()
	cfg.Data, cfg.Listen, cfg.PublicURL = dir, addr, "http://"+addr
	cfg.Storage.SyncWrites = false
	log := slog.New(slog.DiscardHandler)
	so := storetest.Options(t, storeOptions(cfg, log))
	cfg.Storage.Backend, cfg.Storage.Postgres.URL = so.Backend, so.PostgresURL
	db, err := store.Open(so)
	if err != nil {
		t.Fatal(err)
	}
	ten, err := tenancy.NewService(tenancy.Options{DB: db})
	if err != nil {
		t.Fatal(err)
	}
	keys := auth.New(auth.Options{Lookup: ten, Size: 1000})
	ten.OnChange(func(context.Context, []journal.Change) { keys.Purge() })
	secret, err := secrets.Get(ctx, db, "cursor-key", 32)
	if err != nil {
		t.Fatal(err)
	}
	cursors, err := cursor.NewCursors(secret)
	if err != nil {
		t.Fatal(err)
	}
	blobs, err := blob.Open(ctx, cfg.Files, filepath.Join(dir, "blobs"))
	if err != nil {
		t.Fatal(err)
	}
	return deps{cfg: cfg, log: log, db: db, tenancy: ten, auth: keys, reg: prometheus.NewRegistry(), cursors: cursors, blobs: blobs}
}

// call sends a request; headers are name/value pairs.
func (g *gateway) call(t *testing.T, method, path, ctype, body string, headers ...string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, g.url+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if problem := edgetest.CheckContract(req, resp.StatusCode, resp.Header, raw, nil); problem != "" {
		t.Error(problem)
	}
	return resp.StatusCode, string(raw)
}

// admin sends an admin request with the admin token and fails the test unless it answers 2xx.
func (g *gateway) admin(t *testing.T, method, path, body string) string {
	t.Helper()
	code, out := g.call(t, method, "/admin/v1"+path, "application/json", body, "Authorization", "Bearer "+g.token)
	if code >= 300 {
		t.Fatalf("%s %s = %d %s", method, path, code, out)
	}
	return out
}

// public sends a product request with an API key and fails the test unless it answers 2xx.
func (g *gateway) public(t *testing.T, method, path, key, body string) map[string]any {
	t.Helper()
	code, out := g.call(t, method, path, "application/json", body, "X-API-Key", key)
	if code >= 300 {
		t.Fatalf("%s %s = %d %s", method, path, code, out)
	}
	var m map[string]any
	_ = json.Unmarshal([]byte(out), &m)
	return m
}

// login signs a dashboard user in and returns the cookie header value and the CSRF token.
func (g *gateway) login(t *testing.T, email, password string) (cookie, csrf string) {
	t.Helper()
	req, _ := http.NewRequest("POST", g.url+"/admin/v1/session", strings.NewReader(`{"email":"`+email+`","password":"`+password+`"}`))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var v struct {
		CSRF string `json:"csrfToken"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&v)
	for _, c := range resp.Cookies() {
		if c.Name == auth.SessionCookie {
			return c.Name + "=" + c.Value, v.CSRF
		}
	}
	t.Fatalf("sign-in as %s: %d, no cookie", email, resp.StatusCode)
	return "", ""
}

// scopeTenants: two orgs with one of everything each.
const scopeTenants = `
orgs:
  - slug: acme
    projects:
      - id: acme-site
        keys:
          - {name: web, value: pk_live_acme_scope_web, products: [forms, files, records]}
          - {name: server, value: sk_live_acme_scope_server, products: [email, files, records]}
        email:
          from: {email: hello@acme.test}
          templates: [{slug: welcome, subject: "Hi {{name}}", body: "<p>Hi {{name}}</p>"}]
        forms:
          - {slug: contact, published: true, visibility: public, fields: [{name: email, type: email, required: true}]}
        collections:
          - {name: posts, public: true, fields: [{name: title, type: text}]}
  - slug: globex
    suppressions: [kept@globex.test]
    projects:
      - id: globex-site
        keys:
          - {name: web, value: pk_live_globex_scope_web, products: [forms, files, records]}
          - {name: server, value: sk_live_globex_scope_server, products: [email, files, records]}
        email:
          from: {email: hello@globex.test}
          templates: [{slug: welcome, subject: "Secret {{name}}", body: "<p>Globex only</p>"}]
        forms:
          - {slug: contact, published: true, visibility: public, fields: [{name: email, type: email, required: true}]}
        collections:
          - name: posts
            public: true
            fields: [{name: title, type: text}]
            records: [{id: g-1, published: true, data: {title: Globex secret}}]
`

// foreign is what a member of acme must never reach: ids of globex's data.
type foreign struct{ message, asset, submission, session string }

// scopeCase is what a member of acme sends to one admin route with globex's ids, and what it
// must get: want is the status; for lists answered 200, the body must not name globex's data.
type scopeCase struct {
	path, body string
	want       int
	// skip says why the route takes no org (sign-in itself).
	skip string
}

// scopeCases lists every admin route (method and registered path) with its foreign request.
func scopeCases(f foreign) map[string]scopeCase {
	sub := "/projects/globex-site/forms/contact/submissions"
	rec := "/projects/globex-site/collections/posts/records"
	return map[string]scopeCase{
		"POST /apply":   {path: "/apply", body: `{"orgs":[{"slug":"globex"}]}`, want: 403},
		"POST /keys":    {path: "/keys", body: `{"org":"globex","name":"x","kind":"secret","products":["email"]}`, want: 404},
		"POST /plugins": {path: "/plugins?project=globex-site&name=x", body: "\x00asm", want: 403},
		"GET /backup":   {path: "/backup", want: 403},

		"GET /orgs/:org/keys":                            {path: "/orgs/globex/keys", want: 404},
		"GET /orgs/:org/projects":                        {path: "/orgs/globex/projects", want: 404},
		"DELETE /orgs/:org/keys/:name":                   {path: "/orgs/globex/keys/web", want: 404},
		"DELETE /orgs/:org/projects/:project/keys/:name": {path: "/orgs/globex/projects/globex-site/keys/web", want: 404},
		"GET /orgs/:org/suppressions":                    {path: "/orgs/globex/suppressions", want: 404},
		"POST /orgs/:org/suppressions":                   {path: "/orgs/globex/suppressions", body: `{"email":"x@y.test"}`, want: 404},
		"DELETE /orgs/:org/suppressions/:email":          {path: "/orgs/globex/suppressions/kept@globex.test", want: 404},

		"POST /session":        {skip: "signing in names no org"},
		"GET /session":         {skip: "answers the caller's own session"},
		"DELETE /session":      {skip: "ends the caller's own session"},
		"GET /users":           {path: "/users?org=globex", want: 403},
		"POST /users":          {path: "/users", body: `{"email":"x@globex.test","password":"long enough pw","org":"globex"}`, want: 403},
		"DELETE /users/:email": {path: "/users/owner@globex.test", want: 403},
		"PATCH /users/:email":  {path: "/users/owner@globex.test", body: `{"role":"member"}`, want: 403},

		"GET /session/sessions":        {skip: "lists the caller's own sessions"},
		"DELETE /session/sessions":     {skip: "ends the caller's own other sessions"},
		"DELETE /session/sessions/:id": {path: "/session/sessions/" + f.session, want: 404},
		"PUT /session/password":        {skip: "changes the caller's own password"},

		"GET /orgs/:org/invites":           {path: "/orgs/globex/invites", want: 404},
		"POST /orgs/:org/invites":          {path: "/orgs/globex/invites", body: `{"email":"x@globex.test"}`, want: 404},
		"DELETE /orgs/:org/invites/:email": {path: "/orgs/globex/invites/x@globex.test", want: 404},
		"POST /invites/accept":             {skip: "the invite's token is the credential; it names no org"},

		"GET /email/messages":     {path: "/email/messages", want: 200},
		"GET /email/messages/:id": {path: "/email/messages/" + f.message, want: 404},
		"POST /email/events":      {path: "/email/events", body: `{"messageId":"` + f.message + `","type":"delivered"}`, want: 404},

		"GET /projects/:project/email/templates":                {path: "/projects/globex-site/email/templates", want: 404},
		"GET /projects/:project/email/templates/:slug":          {path: "/projects/globex-site/email/templates/welcome", want: 404},
		"PUT /projects/:project/email/templates/:slug":          {path: "/projects/globex-site/email/templates/welcome", body: `{"subject":"x","body":"y"}`, want: 404},
		"DELETE /projects/:project/email/templates/:slug":       {path: "/projects/globex-site/email/templates/welcome", want: 404},
		"POST /projects/:project/email/templates/:slug/preview": {path: "/projects/globex-site/email/templates/welcome/preview", body: `{"variables":{"name":"x"}}`, want: 404},

		"GET /assets":        {path: "/assets?org=globex", want: 404},
		"GET /assets/:id":    {path: "/assets/" + f.asset, want: 404},
		"PATCH /assets/:id":  {path: "/assets/" + f.asset, body: `{"alt":"pwned"}`, want: 404},
		"DELETE /assets/:id": {path: "/assets/" + f.asset, want: 404},

		"GET /projects/:project/forms":                                {path: "/projects/globex-site/forms", want: 404},
		"GET /projects/:project/forms/:slug/submissions":              {path: sub, want: 404},
		"GET /projects/:project/forms/:slug/submissions/:id":          {path: sub + "/" + f.submission, want: 404},
		"GET /projects/:project/forms/:slug/submissions/:id/files/:n": {path: sub + "/" + f.submission + "/files/0", want: 404},
		"DELETE /projects/:project/forms/:slug/submissions/:id":       {path: sub + "/" + f.submission, want: 404},

		"GET /projects/:project/collections":                                    {path: "/projects/globex-site/collections", want: 404},
		"GET /projects/:project/collections/:collection/records":                {path: rec, want: 404},
		"POST /projects/:project/collections/:collection/records\\:import":      {path: rec + ":import", body: `{"id":"g-2","data":{"title":"x"}}`, want: 404},
		"POST /projects/:project/collections/:collection/records":               {path: rec, body: `{"id":"g-1","data":{"title":"x"}}`, want: 404},
		"PUT /projects/:project/collections/:collection/records/:id":            {path: rec + "/g-1", body: `{"data":{"title":"x"}}`, want: 404},
		"DELETE /projects/:project/collections/:collection/records/:id":         {path: rec + "/g-1", want: 404},
		"POST /projects/:project/collections/:collection/records/:id/publish":   {path: rec + "/g-1/publish", want: 404},
		"POST /projects/:project/collections/:collection/records/:id/unpublish": {path: rec + "/g-1/unpublish", want: 404},

		"GET /projects/:project/connections":              {path: "/projects/globex-site/connections", want: 404},
		"PUT /projects/:project/connections/:name/active": {path: "/projects/globex-site/connections/main/active", body: `{"active":false}`, want: 404},
		"GET /projects/:project/plugins":                  {path: "/projects/globex-site/plugins", want: 404},
		"GET /projects/:project/plugins/:name/logs":       {path: "/projects/globex-site/plugins/x/logs", want: 404},

		"GET /projects/:project/webhooks":                  {path: "/projects/globex-site/webhooks", want: 404},
		"GET /projects/:project/webhooks/:name/deliveries": {path: "/projects/globex-site/webhooks/x/deliveries", want: 404},
		"POST /projects/:project/webhooks/:name/test":      {path: "/projects/globex-site/webhooks/x/test", want: 404},
		"PUT /projects/:project/webhooks/:name":            {path: "/projects/globex-site/webhooks/x", body: `{"url":"https://x.example.com/","events":["form.submitted"]}`, want: 404},
		"DELETE /projects/:project/webhooks/:name":         {path: "/projects/globex-site/webhooks/x", want: 404},

		"GET /projects/:project/plugin-modules":               {path: "/projects/globex-site/plugin-modules", want: 404},
		"PUT /projects/:project/plugins/:name":                {path: "/projects/globex-site/plugins/x", body: `{"module":"x","hooks":["forms.submit"]}`, want: 404},
		"DELETE /projects/:project/plugins/:name":             {path: "/projects/globex-site/plugins/x", want: 404},
		"POST /projects/:project/plugins/:name/hooks":         {path: "/projects/globex-site/plugins/x/hooks", body: `{"hook":"forms.submit"}`, want: 404},
		"DELETE /projects/:project/plugins/:name/hooks/:hook": {path: "/projects/globex-site/plugins/x/hooks/forms.submit", want: 404},

		"GET /projects/:project/overview": {path: "/projects/globex-site/overview", want: 404},
	}
}

// A member (here an owner) of acme, with a session, sends every admin route globex's ids:
// each answers 404 (or 403 on operator-only routes), never globex's data, and changes nothing
// of globex. A route registered under /admin/v1 without an entry in scopeCases fails the test.
func TestAdminRoutesScopeEveryRoute(t *testing.T) {
	t.Parallel()
	g := startGateway(t, scopeTenants)
	ctx := context.Background()
	if _, err := g.users.CreateUser(ctx, accounts.NewUser{Email: "owner@acme.test", Password: testUserPassword, Org: "acme", Role: "owner"}); err != nil {
		t.Fatal(err)
	}
	if _, err := g.users.CreateUser(ctx, accounts.NewUser{Email: "owner@globex.test", Password: testUserPassword, Org: "globex", Role: "owner"}); err != nil {
		t.Fatal(err)
	}
	// Globex's data, made through the public API.
	var f foreign
	f.message, _ = g.public(t, "POST", "/email/notifications/send", "sk_live_globex_scope_server",
		`{"to":{"email":"someone@example.test"},"subject":"Globex secret","bodyText":"hi"}`)["id"].(string)
	f.asset, _ = g.public(t, "POST", "/files/upload/presigned", "sk_live_globex_scope_server",
		`{"filename":"secret.png","mimeType":"image/png","size":10}`)["assetId"].(string)
	f.submission, _ = g.public(t, "POST", "/forms/forms/contact/submit", "pk_live_globex_scope_web", `{"email":"globex-secret@example.test"}`)["id"].(string)
	g.login(t, "owner@globex.test", testUserPassword)
	if ss, err := g.users.Sessions(ctx, "owner@globex.test", ""); err == nil && len(ss) == 1 {
		f.session = ss[0].ID
	}
	if f.message == "" || f.asset == "" || f.submission == "" || f.session == "" {
		t.Fatalf("globex data not made: %+v", f)
	}
	secrets := []string{f.message, f.asset, f.submission, "Globex secret", "Globex only", "globex-secret@example.test", "kept@globex.test"}

	cookie, csrf := g.login(t, "owner@acme.test", testUserPassword)
	cases := scopeCases(f)
	var routes []string
	for _, r := range g.srv.App().GetRoutes(true) {
		p, ok := strings.CutPrefix(r.Path, "/admin/v1")
		if !ok || r.Method == http.MethodHead || p == "" {
			continue
		}
		routes = append(routes, r.Method+" "+p)
	}
	sort.Strings(routes)
	if len(routes) < 25 {
		t.Fatalf("walked only %d admin routes: %v", len(routes), routes)
	}
	seen := map[string]bool{}
	for _, route := range routes {
		seen[route] = true
		tc, ok := cases[route]
		if !ok {
			t.Errorf("admin route %s has no entry in scopeCases: add what a member of another org sends and gets", route)
			continue
		}
		if tc.skip != "" {
			continue
		}
		method, _, _ := strings.Cut(route, " ")
		ctype := "application/json"
		if tc.path == "/plugins?project=globex-site&name=x" {
			ctype = "application/wasm"
		}
		code, body := g.call(t, method, "/admin/v1"+tc.path, ctype, tc.body, "Cookie", cookie, "X-CSRF-Token", csrf)
		if code != tc.want {
			t.Errorf("member of acme: %s %s = %d %s, want %d", method, tc.path, code, body, tc.want)
		}
		for _, s := range secrets {
			if code < 300 && strings.Contains(body, s) {
				t.Errorf("member of acme: %s %s answered globex's %q: %s", method, tc.path, s, body)
			}
		}
	}
	// Every state-changing route refuses the session without its CSRF token (sign-in aside),
	// before anything else: even on the member's own org.
	for _, route := range routes {
		method, path, _ := strings.Cut(route, " ")
		if method == http.MethodGet || route == "POST /session" || route == "POST /invites/accept" {
			continue
		}
		path = strings.NewReplacer(":project", "acme-site", ":org", "acme", "\\", "").Replace(path)
		if code, body := g.call(t, method, "/admin/v1"+path, "application/json", "{}", "Cookie", cookie); code != 403 || !strings.Contains(body, "CSRF_REQUIRED") {
			t.Errorf("%s %s with a session and no X-CSRF-Token = %d %s, want 403 CSRF_REQUIRED", method, path, code, body)
		}
	}
	for route := range cases {
		if !seen[route] {
			t.Errorf("scopeCases has %s, which is not a registered admin route", route)
		}
	}
	// Globex's data is untouched, and globex's own owner still sees it.
	if out := g.admin(t, "GET", "/orgs/globex/suppressions", ""); !strings.Contains(out, "kept@globex.test") {
		t.Errorf("globex suppressions after the member's requests: %s", out)
	}
	if out := g.admin(t, "GET", "/orgs/globex/keys", ""); !strings.Contains(out, `"name":"web"`) || strings.Contains(out, `"revoked":true`) {
		t.Errorf("globex keys after the member's requests: %s", out)
	}
	if out := g.admin(t, "GET", "/assets/"+f.asset, ""); strings.Contains(out, "pwned") {
		t.Errorf("globex asset after the member's requests: %s", out)
	}
	if out := g.admin(t, "GET", "/projects/globex-site/forms/contact/submissions/"+f.submission, ""); !strings.Contains(out, "globex-secret@example.test") {
		t.Errorf("globex submission after the member's requests: %s", out)
	}
	if code, out := g.call(t, "GET", "/records/projects/globex-site/collections/posts/records/g-1", "", "", "X-API-Key", "pk_live_globex_scope_web"); code != 200 || !strings.Contains(out, "Globex secret") {
		t.Errorf("globex record after the member's requests: %d %s", code, out)
	}
	gc, _ := g.login(t, "owner@globex.test", testUserPassword)
	if ss, _ := g.users.Sessions(ctx, "owner@globex.test", ""); len(ss) != 2 {
		t.Errorf("globex owner's sessions after the member's requests: %d, want 2", len(ss))
	}
	if code, out := g.call(t, "GET", "/admin/v1/email/messages/"+f.message, "", "", "Cookie", gc); code != 200 {
		t.Errorf("globex's owner reading its message = %d %s", code, out)
	}
	if code, out := g.call(t, "GET", "/admin/v1/email/messages", "", "", "Cookie", gc); code != 200 || !strings.Contains(out, f.message) {
		t.Errorf("globex's owner listing its messages = %d %s", code, out)
	}
}
