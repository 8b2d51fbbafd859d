package admin_test

import (
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/edge/accounts"
	"github.com/gatehouse-dev/gatehouse/edge/config"
	"github.com/gatehouse-dev/gatehouse/edge/edgetest"
)

const twoOrgs = `
orgs:
  - slug: acme
    projects: [{id: acme-site}]
  - slug: globex
    projects: [{id: globex-site}]
`

func harness(t *testing.T, edit ...func(*config.Config)) *edgetest.Harness {
	t.Helper()
	o := edgetest.Options{Tenants: twoOrgs}
	if len(edit) > 0 {
		o.Config = edit[0]
	}
	return edgetest.New(t, o)
}

func cookieOf(t *testing.T, r *edgetest.Response) *http.Cookie {
	t.Helper()
	for _, c := range (&http.Response{Header: r.Header}).Cookies() {
		if c.Name == "gh_session" {
			return c
		}
	}
	t.Fatalf("no gh_session cookie in %v", r.Header)
	return nil
}

func TestSessionLifecycle(t *testing.T) {
	h := harness(t)
	h.User("owner@acme.test", "acme", "owner")
	r := h.Do("POST", "/admin/v1/session", map[string]string{"email": "Owner@Acme.test", "password": edgetest.TestPassword})
	if r.Status != 200 {
		t.Fatalf("POST /session = %d %s", r.Status, r.Body)
	}
	c := cookieOf(t, r)
	if !c.HttpOnly || c.SameSite != http.SameSiteStrictMode || c.Secure || c.Value == "" {
		t.Errorf("cookie = %+v, want HttpOnly, SameSite=Strict, not Secure on http", c)
	}
	if strings.Contains(r.Header.Get("Set-Cookie"), "Max-Age=-1") {
		t.Errorf("sign-in cookie expires at once: %s", r.Header.Get("Set-Cookie"))
	}
	s := &edgetest.Session{}
	*s = *h.Login("owner@acme.test", edgetest.TestPassword)
	g := s.Do("GET", "/session", nil)
	m := g.JSON(t)
	if g.Status != 200 || m["email"] != "owner@acme.test" || m["operator"] != false || m["csrfToken"] != s.CSRF || s.CSRF == "" {
		t.Fatalf("GET /session = %d %s", g.Status, g.Body)
	}
	orgs, _ := m["orgs"].([]any)
	if len(orgs) != 1 || orgs[0].(map[string]any)["slug"] != "acme" || orgs[0].(map[string]any)["role"] != "owner" {
		t.Errorf("GET /session orgs = %v, want [{acme owner}]", m["orgs"])
	}
	// DELETE without the CSRF header is refused; with it the session ends.
	if r := h.Do("DELETE", "/admin/v1/session", nil, "Cookie", "gh_session="+s.Cookie); r.Status != 403 || r.Code() != "CSRF_REQUIRED" {
		t.Errorf("DELETE /session without X-CSRF-Token = %d %s, want 403 CSRF_REQUIRED", r.Status, r.Body)
	}
	if r := s.Do("DELETE", "/session", nil); r.Status != 204 || !strings.Contains(r.Header.Get("Set-Cookie"), "gh_session=;") {
		t.Errorf("DELETE /session = %d %v", r.Status, r.Header)
	}
	if r := s.Do("GET", "/session", nil); r.Status != 401 {
		t.Errorf("GET /session after logout = %d %s, want 401", r.Status, r.Body)
	}
	// The other cookie (first sign-in) still works: logout ends one session.
	if r := h.Do("GET", "/admin/v1/session", nil, "Cookie", "gh_session="+c.Value); r.Status != 200 {
		t.Errorf("GET /session with the other session = %d", r.Status)
	}
	// A deleted user's sessions end at once.
	if r := h.Admin("DELETE", "/users/owner@acme.test", nil); r.Status != 204 {
		t.Fatalf("DELETE /users/owner@acme.test = %d %s", r.Status, r.Body)
	}
	if r := h.Do("GET", "/admin/v1/session", nil, "Cookie", "gh_session="+c.Value); r.Status != 401 {
		t.Errorf("GET /session of a deleted user = %d, want 401", r.Status)
	}
}

func TestSessionCookieSecureOnHTTPS(t *testing.T) {
	h := harness(t, func(c *config.Config) { c.PublicURL = "https://gw.example.test" })
	h.Accounts.CreateUser(t.Context(), accountsUser("op@example.test"))
	r := h.Do("POST", "/admin/v1/session", map[string]string{"email": "op@example.test", "password": edgetest.TestPassword})
	if r.Status != 200 || !cookieOf(t, r).Secure {
		t.Errorf("sign-in on an https public_url = %d, Set-Cookie %q, want Secure", r.Status, r.Header.Get("Set-Cookie"))
	}
}

func TestOperatorSessionSeesEveryOrg(t *testing.T) {
	h := harness(t)
	s := h.User("op@example.test", "", "")
	m := s.Do("GET", "/session", nil).JSON(t)
	if m["operator"] != true || len(m["orgs"].([]any)) != 2 {
		t.Errorf("operator GET /session = %v", m)
	}
	if r := s.Do("POST", "/apply", twoOrgs, "Content-Type", "application/yaml"); r.Status != 200 {
		t.Errorf("operator session POST /apply = %d %s", r.Status, r.Body)
	}
	// The admin token answers GET /session as the operator, without a CSRF token.
	if m := h.Admin("GET", "/session", nil).JSON(t); m["operator"] != true || m["csrfToken"] != "" {
		t.Errorf("admin token GET /session = %v", m)
	}
}

func TestWrongEmailAndWrongPasswordAnswerAlike(t *testing.T) {
	h := harness(t)
	h.User("owner@acme.test", "acme", "owner")
	cases := []struct{ name, email, password string }{
		{"wrong password", "owner@acme.test", "not the password"},
		{"unknown email", "nobody@acme.test", edgetest.TestPassword},
		{"hostile email", "a\x00b@\xff", edgetest.TestPassword},
		{"huge password", "owner@acme.test", strings.Repeat("x", 2000)},
	}
	var first string
	for _, tc := range cases {
		r := h.Do("POST", "/admin/v1/session", map[string]string{"email": tc.email, "password": tc.password}, "X-Forwarded-For", tc.name)
		if r.Status != 401 || r.Header.Get("Set-Cookie") != "" {
			t.Errorf("%s: POST /session = %d %s, want 401 and no cookie", tc.name, r.Status, r.Body)
		}
		if first == "" {
			first = string(r.Body)
		} else if string(r.Body) != first {
			t.Errorf("%s: body %s differs from %s", tc.name, r.Body, first)
		}
	}
	for _, body := range []string{`{"email":"a@b.c"}`, `{"email":"a@b.c","password":"x","password":"y"}`, `[1]`, `{"email":1}`} {
		if r := h.Do("POST", "/admin/v1/session", body); r.Status != 400 {
			t.Errorf("POST /session %s = %d %s, want 400", body, r.Status, r.Body)
		}
	}
}

func TestLoginThrottle(t *testing.T) {
	h := harness(t)
	h.User("owner@acme.test", "acme", "owner")
	for i := 0; i < 10; i++ {
		if r := h.Do("POST", "/admin/v1/session", map[string]string{"email": "owner@acme.test", "password": "wrong-" + strconv.Itoa(i)}); r.Status != 401 {
			t.Fatalf("failure %d = %d, want 401", i+1, r.Status)
		}
	}
	r := h.Do("POST", "/admin/v1/session", map[string]string{"email": "owner@acme.test", "password": edgetest.TestPassword})
	if r.Status != 429 || r.Code() != "RATE_LIMITED" {
		t.Fatalf("11th attempt = %d %s, want 429 RATE_LIMITED (even with the right password)", r.Status, r.Body)
	}
	if s, err := strconv.Atoi(r.Header.Get("Retry-After")); err != nil || s < 1 || s > 60 {
		t.Errorf("Retry-After = %q, want 1..60 seconds", r.Header.Get("Retry-After"))
	}
}

func TestCSRFRequiredOnEveryStateChange(t *testing.T) {
	h := harness(t)
	s := h.User("owner@acme.test", "acme", "owner")
	for _, tc := range []struct{ method, path, body string }{
		{"DELETE", "/admin/v1/orgs/acme/keys/k", ""},
		{"POST", "/admin/v1/keys", `{"org":"acme","name":"k","kind":"secret","products":["email"]}`},
		{"POST", "/admin/v1/users", `{"email":"m@acme.test","password":"long enough pw","org":"acme"}`},
	} {
		for _, csrf := range []string{"", "wrong-token"} {
			r := h.Do(tc.method, tc.path, tc.body, "Cookie", "gh_session="+s.Cookie, "X-CSRF-Token", csrf)
			if r.Status != 403 || r.Code() != "CSRF_REQUIRED" {
				t.Errorf("%s %s with X-CSRF-Token %q = %d %s, want 403 CSRF_REQUIRED", tc.method, tc.path, csrf, r.Status, r.Body)
			}
		}
	}
	if r := s.Do("POST", "/keys", `{"org":"acme","name":"k","kind":"secret","products":["email"]}`); r.Status != 201 {
		t.Errorf("with the CSRF token = %d %s", r.Status, r.Body)
	}
	// The admin token needs no CSRF token (it is not ambient like a cookie).
	if r := h.Admin("DELETE", "/orgs/acme/keys/k", nil); r.Status != 204 {
		t.Errorf("admin token POST = %d %s", r.Status, r.Body)
	}
}

func TestUsersRoutes(t *testing.T) {
	h := harness(t)
	owner := h.User("owner@acme.test", "acme", "owner")
	member := h.User("member@acme.test", "acme", "member")
	h.User("owner@globex.test", "globex", "owner")
	pw := "a long password"
	cases := []struct {
		name   string
		s      *edgetest.Session
		method string
		path   string
		body   any
		status int
		code   string
	}{
		{"owner invites a member", owner, "POST", "/users", map[string]any{"email": "new@acme.test", "password": pw, "org": "acme", "role": "member"}, 201, ""},
		{"owner invites an owner", owner, "POST", "/users", map[string]any{"email": "co@acme.test", "password": pw, "org": "acme", "role": "owner"}, 201, ""},
		{"duplicate email", owner, "POST", "/users", map[string]any{"email": "NEW@acme.test", "password": pw, "org": "acme"}, 409, "USER_EXISTS"},
		{"owner of another org", owner, "POST", "/users", map[string]any{"email": "x@globex.test", "password": pw, "org": "globex"}, 403, "FORBIDDEN"},
		{"owner makes an operator", owner, "POST", "/users", map[string]any{"email": "x@acme.test", "password": pw, "operator": true}, 403, "FORBIDDEN"},
		{"member invites", member, "POST", "/users", map[string]any{"email": "y@acme.test", "password": pw, "org": "acme"}, 403, "FORBIDDEN"},
		{"short password", owner, "POST", "/users", map[string]any{"email": "z@acme.test", "password": "short", "org": "acme"}, 400, "VALIDATION_FAILED"},
		{"bad email", owner, "POST", "/users", map[string]any{"email": "not an email", "password": pw, "org": "acme"}, 400, "VALIDATION_FAILED"},
		{"bad role", owner, "POST", "/users", map[string]any{"email": "r@acme.test", "password": pw, "org": "acme", "role": "admin"}, 400, "VALIDATION_FAILED"},
		{"invalid UTF-8 password", owner, "POST", "/users", "{\"email\":\"u@acme.test\",\"password\":\"\xff\xfe long enough\",\"org\":\"acme\"}", 400, "VALIDATION_FAILED"},
		{"owner lists its org", owner, "GET", "/users", nil, 200, ""},
		{"owner lists another org", owner, "GET", "/users?org=globex", nil, 403, "FORBIDDEN"},
		{"member lists", member, "GET", "/users", nil, 403, "FORBIDDEN"},
		{"owner removes another org's user", owner, "DELETE", "/users/owner@globex.test", nil, 403, "FORBIDDEN"},
		{"owner removes nobody", owner, "DELETE", "/users/nobody@acme.test", nil, 403, "FORBIDDEN"},
		{"member removes", member, "DELETE", "/users/new@acme.test", nil, 403, "FORBIDDEN"},
		{"owner removes a member", owner, "DELETE", "/users/new@acme.test", nil, 204, ""},
	}
	for _, tc := range cases {
		r := tc.s.Do(tc.method, tc.path, tc.body)
		if r.Status != tc.status || (tc.code != "" && r.Code() != tc.code) {
			t.Errorf("%s: %s %s = %d %s, want %d %s", tc.name, tc.method, tc.path, r.Status, r.Body, tc.status, tc.code)
		}
	}
	lr := owner.Do("GET", "/users", nil)
	list, _ := lr.JSON(t)["items"].([]any)
	if len(list) != 3 { // owner, member, co
		t.Errorf("owner's GET /users = %v, want the 3 users of acme", list)
	}
	if r := h.Admin("POST", "/users", map[string]any{"email": "m@nowhere.test", "password": pw, "org": "no-such-org"}); r.Status != 404 {
		t.Errorf("POST /users for an unknown org = %d %s, want 404", r.Status, r.Body)
	}
	if r := h.Admin("GET", "/users", nil); r.Status != 200 || len(r.JSON(t)["items"].([]any)) != 4 {
		t.Errorf("operator GET /users = %d %s", r.Status, r.Body)
	}
}

// With no admin token configured the admin API is off until a dashboard account exists.
func TestAdminAPIWithoutToken(t *testing.T) {
	h := harness(t, func(c *config.Config) { c.AdminToken = "" })
	if r := h.Do("GET", "/admin/v1/session", nil); r.Status != 404 {
		t.Errorf("no token, no user: GET /session = %d, want 404", r.Status)
	}
	s := h.User("op@example.test", "", "")
	if r := s.Do("GET", "/orgs/acme/keys", nil); r.Status != 200 {
		t.Errorf("no token, operator session: GET keys = %d %s", r.Status, r.Body)
	}
	if r := h.Do("GET", "/admin/v1/orgs/acme/keys", nil, "Authorization", "Bearer "); r.Status != 401 {
		t.Errorf("no token configured, empty bearer = %d, want 401", r.Status)
	}
}

func accountsUser(email string) accounts.NewUser {
	return accounts.NewUser{Email: email, Password: edgetest.TestPassword, Operator: true}
}
