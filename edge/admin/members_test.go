package admin_test

import (
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/edge/edgetest"
)

// An owner invites into its org with a role, sees the invite listed (never its token) and
// revokes one; the invitee accepts with a password, without a session, and is signed in with
// the invited role; members, other orgs and the admin token get what 8.2 says.
func TestInviteRoutes(t *testing.T) {
	h := harness(t)
	owner := h.User("owner@acme.test", "acme", "owner")
	member := h.User("member@acme.test", "acme", "member")
	globex := h.User("owner@globex.test", "globex", "owner")
	r := owner.Do("POST", "/orgs/acme/invites", map[string]any{"email": "New@acme.test", "role": "owner"})
	inv := r.JSON(t)
	token, _ := inv["token"].(string)
	if r.Status != 201 || inv["email"] != "new@acme.test" || inv["role"] != "owner" || inv["invitedBy"] != "owner@acme.test" || token == "" {
		t.Fatalf("POST invites = %d %s", r.Status, r.Body)
	}
	cases := []struct {
		name   string
		s      *edgetest.Session
		method string
		path   string
		body   any
		status int
		code   string
	}{
		{"member invites", member, "POST", "/orgs/acme/invites", map[string]any{"email": "x@acme.test"}, 403, "FORBIDDEN"},
		{"member lists invites", member, "GET", "/orgs/acme/invites", nil, 403, "FORBIDDEN"},
		{"member revokes", member, "DELETE", "/orgs/acme/invites/new@acme.test", nil, 403, "FORBIDDEN"},
		{"another org's owner lists", globex, "GET", "/orgs/acme/invites", nil, 404, "NOT_FOUND"},
		{"another org's owner invites", globex, "POST", "/orgs/acme/invites", map[string]any{"email": "x@acme.test"}, 404, "NOT_FOUND"},
		{"another org's owner revokes", globex, "DELETE", "/orgs/acme/invites/new@acme.test", nil, 404, "NOT_FOUND"},
		{"existing user", owner, "POST", "/orgs/acme/invites", map[string]any{"email": "member@acme.test"}, 409, "USER_EXISTS"},
		{"bad email", owner, "POST", "/orgs/acme/invites", map[string]any{"email": "nope"}, 400, "VALIDATION_FAILED"},
		{"bad role", owner, "POST", "/orgs/acme/invites", map[string]any{"email": "r@acme.test", "role": "root"}, 400, "VALIDATION_FAILED"},
		{"duplicate keys", owner, "POST", "/orgs/acme/invites", `{"email":"a@acme.test","email":"b@acme.test"}`, 400, "VALIDATION_FAILED"},
		{"revoke nobody", owner, "DELETE", "/orgs/acme/invites/nobody@acme.test", nil, 404, "NOT_FOUND"},
		{"owner invites a member", owner, "POST", "/orgs/acme/invites", map[string]any{"email": "gone@acme.test"}, 201, ""},
		{"owner revokes it", owner, "DELETE", "/orgs/acme/invites/gone@acme.test", nil, 204, ""},
	}
	for _, tc := range cases {
		r := tc.s.Do(tc.method, tc.path, tc.body)
		if r.Status != tc.status || (tc.code != "" && r.Code() != tc.code) {
			t.Errorf("%s: %s %s = %d %s, want %d %s", tc.name, tc.method, tc.path, r.Status, r.Body, tc.status, tc.code)
		}
	}
	list := owner.Do("GET", "/orgs/acme/invites", nil)
	if list.Status != 200 || !strings.Contains(string(list.Body), `"email":"new@acme.test"`) || strings.Contains(string(list.Body), token) || strings.Contains(string(list.Body), "gone@") {
		t.Errorf("GET invites = %d %s", list.Status, list.Body)
	}
	if r := h.Admin("POST", "/orgs/nope/invites", map[string]any{"email": "x@nope.test"}); r.Status != 404 {
		t.Errorf("invite into an unknown org = %d %s", r.Status, r.Body)
	}
	// Accepting needs no session and no CSRF token; the token works once.
	for _, tc := range []struct {
		name   string
		body   any
		status int
		code   string
	}{
		{"wrong token", map[string]string{"token": "made-up", "password": "a long password"}, 404, "NOT_FOUND"},
		{"short password", map[string]string{"token": token, "password": "short"}, 400, "VALIDATION_FAILED"},
		{"not JSON", "token=x", 400, ""},
	} {
		if r := h.Do("POST", "/admin/v1/invites/accept", tc.body); r.Status != tc.status || (tc.code != "" && r.Code() != tc.code) {
			t.Errorf("accept %s = %d %s, want %d %s", tc.name, r.Status, r.Body, tc.status, tc.code)
		}
	}
	r = h.Do("POST", "/admin/v1/invites/accept", map[string]string{"token": token, "password": "the new owner's password"})
	if r.Status != 200 || r.JSON(t)["email"] != "new@acme.test" || cookieOf(t, r).Value == "" {
		t.Fatalf("accept = %d %s", r.Status, r.Body)
	}
	orgs, _ := r.JSON(t)["orgs"].([]any)
	if len(orgs) != 1 || orgs[0].(map[string]any)["role"] != "owner" {
		t.Errorf("accepted session orgs = %v, want acme owner", orgs)
	}
	if r := h.Do("POST", "/admin/v1/invites/accept", map[string]string{"token": token, "password": "the new owner's password"}); r.Status != 404 {
		t.Errorf("accepting twice = %d %s", r.Status, r.Body)
	}
	h.Login("new@acme.test", "the new owner's password")
}

// PATCH /users/{email} changes a member's role: owners of its org and operators only, never
// one's own, and the member's open session has the new role at once.
func TestSetRoleRoute(t *testing.T) {
	h := harness(t)
	owner := h.User("owner@acme.test", "acme", "owner")
	member := h.User("member@acme.test", "acme", "member")
	h.User("owner@globex.test", "globex", "owner")
	for _, tc := range []struct {
		name   string
		s      *edgetest.Session
		path   string
		body   any
		status int
		code   string
	}{
		{"member promotes itself", member, "/users/member@acme.test", map[string]string{"role": "owner"}, 403, "FORBIDDEN"},
		{"owner demotes itself", owner, "/users/owner@acme.test", map[string]string{"role": "member"}, 403, "FORBIDDEN"},
		{"another org's user", owner, "/users/owner@globex.test", map[string]string{"role": "member"}, 403, "FORBIDDEN"},
		{"nobody", owner, "/users/nobody@acme.test", map[string]string{"role": "member"}, 403, "FORBIDDEN"},
		{"bad role", owner, "/users/member@acme.test", map[string]string{"role": "root"}, 400, "VALIDATION_FAILED"},
		{"promote", owner, "/users/member@acme.test", map[string]string{"role": "owner"}, 200, ""},
	} {
		if r := tc.s.Do("PATCH", tc.path, tc.body); r.Status != tc.status || (tc.code != "" && r.Code() != tc.code) {
			t.Errorf("%s: PATCH %s = %d %s, want %d %s", tc.name, tc.path, r.Status, r.Body, tc.status, tc.code)
		}
	}
	if r := member.Do("GET", "/orgs/acme/invites", nil); r.Status != 200 {
		t.Errorf("promoted member lists invites = %d %s, want 200 at once", r.Status, r.Body)
	}
	if r := h.Admin("PATCH", "/users/owner@globex.test", map[string]string{"role": "member"}); r.Status != 200 {
		t.Errorf("operator PATCH = %d %s", r.Status, r.Body)
	}
	if r := h.Admin("PATCH", "/users/nobody@acme.test", map[string]string{"role": "member"}); r.Status != 404 {
		t.Errorf("operator PATCH of nobody = %d %s", r.Status, r.Body)
	}
}

// A user lists their sessions (with the current one marked and no token), ends another one,
// ends all others, and changes their password (wrong current: 400, the session stays; right:
// 204, the other sessions end, the new password signs in). The admin token has no account.
func TestSelfServiceRoutes(t *testing.T) {
	h := harness(t)
	a := h.User("ann@acme.test", "acme", "member")
	b := h.Login("ann@acme.test", edgetest.TestPassword)
	c := h.Login("ann@acme.test", edgetest.TestPassword)
	bob := h.User("bob@acme.test", "acme", "member")
	r := a.Do("GET", "/session/sessions", nil)
	items, _ := r.JSON(t)["items"].([]any)
	if r.Status != 200 || len(items) != 3 {
		t.Fatalf("GET /session/sessions = %d %s, want 3", r.Status, r.Body)
	}
	for _, tok := range []string{a.Cookie, b.Cookie, c.Cookie, a.CSRF} {
		if strings.Contains(string(r.Body), tok) {
			t.Errorf("the sessions list holds a token: %s", r.Body)
		}
	}
	current := 0
	var other string
	for _, it := range items {
		m := it.(map[string]any)
		if m["current"] == true {
			current++
		} else if other == "" {
			other = m["id"].(string)
		}
		if m["ip"] != "127.0.0.1" || m["userAgent"] == "" {
			t.Errorf("session without its client: %v", m)
		}
	}
	if current != 1 {
		t.Errorf("%d sessions marked current", current)
	}
	bobs := bob.Do("GET", "/session/sessions", nil).JSON(t)["items"].([]any)
	bobID := bobs[0].(map[string]any)["id"].(string)
	if r := a.Do("DELETE", "/session/sessions/"+bobID, nil); r.Status != 404 {
		t.Errorf("ending another user's session = %d %s, want 404", r.Status, r.Body)
	}
	if r := bob.Do("GET", "/session", nil); r.Status != 200 {
		t.Errorf("bob's session after ann's attempt = %d", r.Status)
	}
	if r := a.Do("DELETE", "/session/sessions/"+other, nil); r.Status != 204 {
		t.Errorf("ending one's other session = %d %s", r.Status, r.Body)
	}
	if r := a.Do("DELETE", "/session/sessions", nil); r.Status != 200 || r.JSON(t)["ended"] != float64(1) {
		t.Errorf("ending the others = %d %s, want ended 1", r.Status, r.Body)
	}
	for _, s := range []*edgetest.Session{b, c} {
		if r := s.Do("GET", "/session", nil); r.Status != 401 {
			t.Errorf("an ended session answers %d", r.Status)
		}
	}
	if r := a.Do("GET", "/session", nil); r.Status != 200 {
		t.Fatalf("the caller's session ended: %d", r.Status)
	}
	d := h.Login("ann@acme.test", edgetest.TestPassword)
	for _, tc := range []struct {
		name   string
		body   any
		status int
		field  string
	}{
		{"wrong current", map[string]string{"currentPassword": "nope", "newPassword": "a new long password"}, 400, "currentPassword"},
		{"short new", map[string]string{"currentPassword": edgetest.TestPassword, "newPassword": "short"}, 400, "newPassword"},
		{"wrong type", `{"currentPassword":1}`, 400, ""},
	} {
		r := a.Do("PUT", "/session/password", tc.body)
		if r.Status != tc.status || !strings.Contains(string(r.Body), tc.field) {
			t.Errorf("%s: PUT /session/password = %d %s, want %d naming %s", tc.name, r.Status, r.Body, tc.status, tc.field)
		}
	}
	if r := a.Do("GET", "/session", nil); r.Status != 200 {
		t.Fatalf("a wrong current password ended the session: %d", r.Status)
	}
	if r := a.Do("PUT", "/session/password", map[string]string{"currentPassword": edgetest.TestPassword, "newPassword": "a new long password"}); r.Status != 204 {
		t.Fatalf("PUT /session/password = %d %s", r.Status, r.Body)
	}
	if r := d.Do("GET", "/session", nil); r.Status != 401 {
		t.Errorf("other session after a password change = %d, want 401", r.Status)
	}
	if r := a.Do("GET", "/session", nil); r.Status != 200 {
		t.Errorf("the caller's session after its password change = %d", r.Status)
	}
	if r := h.Do("POST", "/admin/v1/session", map[string]string{"email": "ann@acme.test", "password": edgetest.TestPassword}); r.Status != 401 {
		t.Errorf("old password = %d, want 401", r.Status)
	}
	h.Login("ann@acme.test", "a new long password")
	for _, tc := range []struct{ method, path string }{{"GET", "/session/sessions"}, {"DELETE", "/session/sessions"}, {"PUT", "/session/password"}} {
		if r := h.Admin(tc.method, tc.path, map[string]string{}); r.Status != 403 {
			t.Errorf("admin token %s %s = %d %s, want 403", tc.method, tc.path, r.Status, r.Body)
		}
	}
}
