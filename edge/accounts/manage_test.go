package accounts

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// A user's sessions are listed newest first with where they come from (never a token), the
// current one marked; another user's session cannot be named; ending the others keeps the
// caller's; a password change checks the current password and ends the other sessions.
func TestSessionsListEndAndPasswordChange(t *testing.T) {
	s, clock := newService(t)
	ctx := context.Background()
	for _, e := range []string{"ann@b.test", "bob@b.test"} {
		if _, err := s.CreateUser(ctx, NewUser{Email: e, Password: pw, Org: "acme"}); err != nil {
			t.Fatal(err)
		}
	}
	a, _ := s.Login(ctx, "ann@b.test", pw, Client{IP: "10.0.0.1", UserAgent: "Firefox " + strings.Repeat("x", 400)})
	clock.Add(time.Minute)
	b, _ := s.Login(ctx, "ann@b.test", pw, Client{IP: "10.0.0.2", UserAgent: "Chromium"})
	clock.Add(time.Minute)
	c, _ := s.Login(ctx, "ann@b.test", pw, Client{IP: "10.0.0.3"})
	bob, _ := s.Login(ctx, "bob@b.test", pw, Client{IP: "10.0.0.9"})
	list, err := s.Sessions(ctx, "ANN@b.test", b.Token)
	if err != nil || len(list) != 3 {
		t.Fatalf("Sessions = %+v, %v; want 3", list, err)
	}
	if list[0].IP != "10.0.0.3" || list[1].IP != "10.0.0.2" || !list[1].Current || list[0].Current || list[2].Current {
		t.Errorf("Sessions order/current = %+v", list)
	}
	if len(list[2].UserAgent) != MaxUserAgent || list[1].UserAgent != "Chromium" {
		t.Errorf("user agents = %q, %q", list[2].UserAgent, list[1].UserAgent)
	}
	for _, it := range list {
		if it.ID == a.Token || it.ID == b.Token || strings.Contains(it.ID, a.CSRFToken) {
			t.Errorf("a session's id is its token: %+v", it)
		}
	}
	// Bob's session cannot be ended by ann, nor a made-up id.
	bobs, _ := s.Sessions(ctx, "bob@b.test", "")
	for _, id := range []string{bobs[0].ID, "nope", strings.Repeat("0", 64)} {
		if err := s.EndSession(ctx, "ann@b.test", id); !errors.Is(err, ErrNoSession) {
			t.Errorf("EndSession(ann, %q) = %v, want ErrNoSession", id, err)
		}
	}
	if err := s.EndSession(ctx, "ann@b.test", list[0].ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Session(ctx, c.Token); !errors.Is(err, ErrNoSession) {
		t.Errorf("ended session still open: %v", err)
	}
	if n, err := s.EndOtherSessions(ctx, "ann@b.test", b.Token); err != nil || n != 1 {
		t.Errorf("EndOtherSessions = %d, %v; want 1", n, err)
	}
	if _, err := s.Session(ctx, a.Token); !errors.Is(err, ErrNoSession) {
		t.Errorf("other session still open: %v", err)
	}
	if _, err := s.Session(ctx, b.Token); err != nil {
		t.Errorf("the kept session ended: %v", err)
	}
	if _, err := s.Session(ctx, bob.Token); err != nil {
		t.Errorf("bob's session ended by ann: %v", err)
	}
	// Password change.
	a, _ = s.Login(ctx, "ann@b.test", pw, Client{IP: "10.0.0.1"})
	if err := s.ChangePassword(ctx, "ann@b.test", "not it", "a new good password", b.Token); !errors.Is(err, ErrCredentials) {
		t.Errorf("ChangePassword with a wrong current = %v", err)
	}
	var inv *InvalidError
	if err := s.ChangePassword(ctx, "ann@b.test", pw, "short", b.Token); !errors.As(err, &inv) || inv.Field != "password" {
		t.Errorf("ChangePassword to a short one = %v", err)
	}
	if err := s.ChangePassword(ctx, "ann@b.test", pw, "a new good password", b.Token); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Session(ctx, a.Token); !errors.Is(err, ErrNoSession) {
		t.Errorf("other session open after a password change: %v", err)
	}
	if _, err := s.Session(ctx, b.Token); err != nil {
		t.Errorf("the caller's session ended by its password change: %v", err)
	}
	if _, err := s.Login(ctx, "ann@b.test", pw, Client{IP: "10.0.0.1"}); !errors.Is(err, ErrCredentials) {
		t.Errorf("old password still works: %v", err)
	}
	if _, err := s.Login(ctx, "ann@b.test", "a new good password", Client{IP: "10.0.0.1"}); err != nil {
		t.Errorf("new password refused: %v", err)
	}
	// Wrong current passwords count as failed sign-ins of the email.
	for i := 0; i < DefaultFailures; i++ {
		_ = s.ChangePassword(ctx, "bob@b.test", "wrong", "whatever long", "")
	}
	var thr *ThrottledError
	if err := s.ChangePassword(ctx, "bob@b.test", pw, "another good one", ""); !errors.As(err, &thr) {
		t.Errorf("ChangePassword after 10 wrong = %v, want ThrottledError", err)
	}
	if _, err := s.Login(ctx, "bob@b.test", pw, Client{IP: "10.1.1.1"}); !errors.As(err, &thr) {
		t.Errorf("Login after 10 wrong password changes = %v, want ThrottledError", err)
	}
}

func TestSetRole(t *testing.T) {
	s, _ := newService(t)
	ctx := context.Background()
	_, _ = s.CreateUser(ctx, NewUser{Email: "ann@b.test", Password: pw, Org: "acme"})
	_, _ = s.CreateUser(ctx, NewUser{Email: "op@b.test", Password: pw, Operator: true})
	sess, _ := s.Login(ctx, "ann@b.test", pw, Client{})
	if u, err := s.SetRole(ctx, "Ann@b.test", RoleOwner); err != nil || u.Role != RoleOwner {
		t.Fatalf("SetRole = %+v, %v", u, err)
	}
	if got, _ := s.Session(ctx, sess.Token); got.User.Role != RoleOwner {
		t.Errorf("open session role = %q, want owner at once", got.User.Role)
	}
	var inv *InvalidError
	for _, tc := range []struct{ email, role string }{{"ann@b.test", "root"}, {"op@b.test", RoleMember}} {
		if _, err := s.SetRole(ctx, tc.email, tc.role); !errors.As(err, &inv) {
			t.Errorf("SetRole(%s, %s) = %v, want InvalidError", tc.email, tc.role, err)
		}
	}
	if _, err := s.SetRole(ctx, "nobody@b.test", RoleOwner); !errors.Is(err, ErrNotFound) {
		t.Errorf("SetRole of nobody = %v", err)
	}
}

// An invite is listed without its token, accepted once with a password (creating the user and
// a session), replaced by a second invite of the same email, refused when expired or revoked.
func TestInvites(t *testing.T) {
	s, clock := newService(t)
	ctx := context.Background()
	_, _ = s.CreateUser(ctx, NewUser{Email: "owner@b.test", Password: pw, Org: "acme", Role: RoleOwner})
	if _, _, err := s.CreateInvite(ctx, "owner@b.test", "acme", "", "owner@b.test"); !errors.Is(err, ErrExists) {
		t.Errorf("invite of an existing user = %v", err)
	}
	var inv *InvalidError
	for _, tc := range []struct{ email, org, role string }{{"not an email", "acme", ""}, {"x@b.test", "", ""}, {"x@b.test", "acme", "root"}} {
		if _, _, err := s.CreateInvite(ctx, tc.email, tc.org, tc.role, "owner@b.test"); !errors.As(err, &inv) {
			t.Errorf("CreateInvite(%+v) = %v, want InvalidError", tc, err)
		}
	}
	first, tok1, err := s.CreateInvite(ctx, "New@b.test", "acme", RoleOwner, "owner@b.test")
	if err != nil || first.Email != "new@b.test" || first.Role != RoleOwner || tok1 == "" {
		t.Fatalf("CreateInvite = %+v, %q, %v", first, tok1, err)
	}
	clock.Add(time.Second)
	_, tok2, _ := s.CreateInvite(ctx, "new@b.test", "acme", RoleMember, "owner@b.test")
	_, other, _ := s.CreateInvite(ctx, "g@b.test", "globex", "", "op")
	list, _ := s.Invites(ctx, "acme")
	if len(list) != 1 || list[0].Role != RoleMember {
		t.Errorf("Invites(acme) = %+v, want the second invite only", list)
	}
	if _, err := s.AcceptInvite(ctx, tok1, "a long password", Client{IP: "1.1.1.1"}); !errors.Is(err, ErrNoInvite) {
		t.Errorf("accepting a replaced invite = %v", err)
	}
	if _, err := s.AcceptInvite(ctx, tok2, "short", Client{IP: "1.1.1.1"}); !errors.As(err, &inv) {
		t.Errorf("accepting with a short password = %v", err)
	}
	sess, err := s.AcceptInvite(ctx, tok2, "a long password", Client{IP: "1.1.1.1", UserAgent: "ua"})
	if err != nil || sess.User.Email != "new@b.test" || sess.User.Org != "acme" || sess.User.Role != RoleMember {
		t.Fatalf("AcceptInvite = %+v, %v", sess, err)
	}
	if _, err := s.Session(ctx, sess.Token); err != nil {
		t.Errorf("the accept's session = %v", err)
	}
	if _, err := s.AcceptInvite(ctx, tok2, "a long password", Client{IP: "1.1.1.2"}); !errors.Is(err, ErrNoInvite) {
		t.Errorf("accepting twice = %v", err)
	}
	if list, _ := s.Invites(ctx, "acme"); len(list) != 0 {
		t.Errorf("accepted invite still listed: %+v", list)
	}
	if err := s.RevokeInvite(ctx, "acme", "g@b.test"); !errors.Is(err, ErrNoInvite) {
		t.Errorf("revoking another org's invite = %v", err)
	}
	clock.Add(InviteTTL)
	if list, _ := s.Invites(ctx, "globex"); len(list) != 0 {
		t.Errorf("expired invite listed: %+v", list)
	}
	if _, err := s.AcceptInvite(ctx, other, "a long password", Client{IP: "1.1.1.3"}); !errors.Is(err, ErrNoInvite) {
		t.Errorf("accepting an expired invite = %v", err)
	}
	_, tok3, _ := s.CreateInvite(ctx, "h@b.test", "globex", "", "op")
	if err := s.RevokeInvite(ctx, "globex", "H@b.test"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AcceptInvite(ctx, tok3, "a long password", Client{IP: "1.1.1.4"}); !errors.Is(err, ErrNoInvite) {
		t.Errorf("accepting a revoked invite = %v", err)
	}
	// Made-up tokens count against the IP.
	for i := 0; i < DefaultFailures; i++ {
		_, _ = s.AcceptInvite(ctx, "made-up", "a long password", Client{IP: "6.6.6.6"})
	}
	var thr *ThrottledError
	if _, err := s.AcceptInvite(ctx, "made-up", "a long password", Client{IP: "6.6.6.6"}); !errors.As(err, &thr) {
		t.Errorf("11th made-up token = %v, want ThrottledError", err)
	}
}
