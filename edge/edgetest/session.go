package edgetest

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/gatehouse-dev/gatehouse/edge/accounts"
	"github.com/gatehouse-dev/gatehouse/edge/auth"
	"github.com/gatehouse-dev/gatehouse/edge/tenancy"
)

// Session is a signed-in dashboard user of a harness.
type Session struct {
	Cookie string // the gh_session value
	CSRF   string
	h      *Harness
}

// User creates a dashboard user (member of org with role, or an operator when org is "")
// with a fixed test password and signs it in.
func (h *Harness) User(email, org, role string) *Session {
	h.t.Helper()
	nu := accounts.NewUser{Email: email, Password: TestPassword, Org: org, Role: role, Operator: org == ""}
	if _, err := h.Accounts.CreateUser(context.Background(), nu); err != nil {
		h.t.Fatalf("CreateUser(%s): %v", email, err)
	}
	return h.Login(email, TestPassword)
}

// TestPassword is the password of users made by Harness.User.
const TestPassword = "correct horse battery"

// Login signs in through POST /admin/v1/session and fails the test unless it answers 200.
func (h *Harness) Login(email, password string) *Session {
	h.t.Helper()
	r := h.Do("POST", "/admin/v1/session", map[string]string{"email": email, "password": password})
	if r.Status != 200 {
		h.t.Fatalf("POST /admin/v1/session as %s = %d %s", email, r.Status, r.Body)
	}
	var v struct {
		CSRF string `json:"csrfToken"`
	}
	_ = json.Unmarshal(r.Body, &v)
	for _, c := range (&http.Response{Header: r.Header}).Cookies() {
		if c.Name == auth.SessionCookie {
			return &Session{Cookie: c.Value, CSRF: v.CSRF, h: h}
		}
	}
	h.t.Fatalf("sign-in as %s set no %s cookie: %v", email, auth.SessionCookie, r.Header)
	return nil
}

// Do sends an admin API request (path below /admin/v1) with the session cookie and, for
// state-changing methods, its CSRF token. headers are extra name/value pairs.
func (s *Session) Do(method, path string, body any, headers ...string) *Response {
	s.h.t.Helper()
	hs := append([]string{"Cookie", auth.SessionCookie + "=" + s.Cookie}, headers...)
	if method != "GET" && method != "HEAD" {
		hs = append(hs, "X-CSRF-Token", s.CSRF)
	}
	if !strings.HasPrefix(path, "/admin/v1") {
		path = "/admin/v1" + path
	}
	return s.h.Do(method, path, body, hs...)
}

func projectOrg(ten *tenancy.Service) func(ctx context.Context, project string) (string, error) {
	return func(ctx context.Context, project string) (string, error) {
		p, err := ten.Project(ctx, project)
		return p.Org, err
	}
}
