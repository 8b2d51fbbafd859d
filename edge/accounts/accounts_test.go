package accounts

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/edge/edgetest/storetest"
	"github.com/gatehouse-dev/gatehouse/edge/store"
)

// clock is a manual clock (edgetest's would import this package back).
type clock struct{ t time.Time }

func (c *clock) Now() time.Time      { return c.t }
func (c *clock) Add(d time.Duration) { c.t = c.t.Add(d) }

func newService(t *testing.T) (*Service, *clock) {
	t.Helper()
	db, err := storetest.Open(t, store.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	clock := &clock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	s, err := NewService(Options{DB: db, Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	return s, clock
}

const pw = "a good password"

func TestCreateUserValidates(t *testing.T) {
	s, _ := newService(t)
	ctx := context.Background()
	cases := []struct {
		name  string
		u     NewUser
		field string
	}{
		{"no org", NewUser{Email: "a@b.test", Password: pw}, "org"},
		{"operator with org", NewUser{Email: "a@b.test", Password: pw, Operator: true, Org: "acme"}, "operator"},
		{"bad role", NewUser{Email: "a@b.test", Password: pw, Org: "acme", Role: "root"}, "role"},
		{"display name", NewUser{Email: "A <a@b.test>", Password: pw, Org: "acme"}, "email"},
		{"empty email", NewUser{Password: pw, Org: "acme"}, "email"},
		{"short password", NewUser{Email: "a@b.test", Password: "1234567", Org: "acme"}, "password"},
		{"long password", NewUser{Email: "a@b.test", Password: strings.Repeat("p", MaxPassword+1), Org: "acme"}, "password"},
		{"invalid UTF-8", NewUser{Email: "a@b.test", Password: "\xff" + pw, Org: "acme"}, "password"},
	}
	for _, tc := range cases {
		_, err := s.CreateUser(ctx, tc.u)
		var inv *InvalidError
		if !errors.As(err, &inv) || inv.Field != tc.field {
			t.Errorf("%s: CreateUser = %v, want InvalidError on %s", tc.name, err, tc.field)
		}
	}
	u, err := s.CreateUser(ctx, NewUser{Email: " Ann@B.test ", Password: pw, Org: "acme"})
	if err != nil || u.Email != "ann@b.test" || u.Role != RoleMember {
		t.Fatalf("CreateUser = %+v, %v; want ann@b.test, member", u, err)
	}
	if _, err := s.CreateUser(ctx, NewUser{Email: "ANN@b.test", Password: pw, Org: "acme"}); !errors.Is(err, ErrExists) {
		t.Errorf("CreateUser of a taken email = %v, want ErrExists", err)
	}
}

func TestLoginSessionExpiryAndThrottle(t *testing.T) {
	s, clock := newService(t)
	ctx := context.Background()
	if _, err := s.CreateUser(ctx, NewUser{Email: "ann@b.test", Password: pw, Org: "acme", Role: RoleOwner}); err != nil {
		t.Fatal(err)
	}
	sess, err := s.Login(ctx, "ANN@b.test", pw, Client{IP: "10.0.0.1"})
	if err != nil || sess.User.Role != RoleOwner || sess.Token == "" || sess.CSRFToken == "" || sess.Token == sess.CSRFToken {
		t.Fatalf("Login = %+v, %v", sess, err)
	}
	if got, err := s.Session(ctx, sess.Token); err != nil || got.CSRFToken != sess.CSRFToken {
		t.Fatalf("Session = %+v, %v", got, err)
	}
	clock.Add(DefaultSessionTTL)
	if _, err := s.Session(ctx, sess.Token); !errors.Is(err, ErrNoSession) {
		t.Errorf("Session after its TTL = %v, want ErrNoSession", err)
	}
	// Ten failures for one email from ten IPs: the email is throttled, other emails are not.
	for i := 0; i < DefaultFailures; i++ {
		if _, err := s.Login(ctx, "ann@b.test", "wrong", Client{IP: "10.0.1." + string(rune('a'+i))}); !errors.Is(err, ErrCredentials) {
			t.Fatalf("failure %d = %v", i, err)
		}
		clock.Add(time.Second)
	}
	_, err = s.Login(ctx, "ann@b.test", pw, Client{IP: "10.0.2.1"})
	var thr *ThrottledError
	if !errors.As(err, &thr) || thr.RetryAfter <= 0 || thr.RetryAfter > time.Minute {
		t.Fatalf("11th attempt = %v, want ThrottledError within a minute", err)
	}
	clock.Add(thr.RetryAfter)
	if _, err := s.Login(ctx, "ann@b.test", pw, Client{IP: "10.0.2.1"}); err != nil {
		t.Errorf("Login once the window moved = %v", err)
	}
	// Ten failures from one IP for ten emails: the IP is throttled.
	for i := 0; i < DefaultFailures; i++ {
		_, _ = s.Login(ctx, "x"+string(rune('a'+i))+"@b.test", "wrong", Client{IP: "10.9.9.9"})
	}
	if _, err := s.Login(ctx, "ann@b.test", pw, Client{IP: "10.9.9.9"}); !errors.As(err, &thr) {
		t.Errorf("Login from a throttled IP = %v, want ThrottledError", err)
	}
}

func TestLogoutAndDeleteEndSessions(t *testing.T) {
	s, _ := newService(t)
	ctx := context.Background()
	_, _ = s.CreateUser(ctx, NewUser{Email: "ann@b.test", Password: pw, Operator: true})
	a, _ := s.Login(ctx, "ann@b.test", pw, Client{IP: "ip"})
	b, _ := s.Login(ctx, "ann@b.test", pw, Client{IP: "ip"})
	if err := s.Logout(ctx, a.Token); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Session(ctx, a.Token); !errors.Is(err, ErrNoSession) {
		t.Errorf("Session after Logout = %v", err)
	}
	if _, err := s.Session(ctx, b.Token); err != nil {
		t.Errorf("the other session after Logout = %v", err)
	}
	if err := s.DeleteUser(ctx, "ANN@b.test"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Session(ctx, b.Token); !errors.Is(err, ErrNoSession) {
		t.Errorf("Session of a deleted user = %v", err)
	}
	if err := s.DeleteUser(ctx, "ann@b.test"); !errors.Is(err, ErrNotFound) {
		t.Errorf("DeleteUser twice = %v", err)
	}
	for _, tok := range []string{"", strings.Repeat("x", 500), "\x00"} {
		if _, err := s.Session(ctx, tok); !errors.Is(err, ErrNoSession) {
			t.Errorf("Session(%q) = %v", tok, err)
		}
	}
}

func TestVerifyRefusesMalformedHashes(t *testing.T) {
	good, _ := defaultHasher.hash(pw)
	if ok, err := verify(good, pw); !ok || err != nil {
		t.Fatalf("verify(good) = %v, %v", ok, err)
	}
	if ok, _ := verify(good, pw+"x"); ok {
		t.Errorf("verify accepted a wrong password")
	}
	for _, bad := range []string{"", "$argon2i$v=19$m=1,t=1,p=1$AAAA$AAAA", "$argon2id$v=18$m=1,t=1,p=1$AAAA$AAAA",
		"$argon2id$v=19$m=0,t=1,p=1$AAAA$AAAA", "$argon2id$v=19$m=8,t=1,p=1$!!$AAAA", "$argon2id$v=19$m=8,t=1,p=1$AAAA$"} {
		if ok, err := verify(bad, pw); ok || err == nil {
			t.Errorf("verify(%q) = %v, %v; want an error", bad, ok, err)
		}
	}
}

// FuzzValidate: any email, password, org and role either fail with an InvalidError or give a
// user whose email is normalized (validating it again changes nothing).
func FuzzValidate(f *testing.F) {
	f.Add("Ann@B.test", pw, "acme", "owner", false)
	f.Add(" a@b ", "short", "", "", true)
	f.Add("A <a@b.test>", "\xff\xfe password", "acme", "root", false)
	f.Add("a@b.test\x00", strings.Repeat("p", 2000), "acme", "", false)
	f.Fuzz(func(t *testing.T, email, password, org, role string, operator bool) {
		u, err := validate(NewUser{Email: email, Password: password, Org: org, Role: role, Operator: operator})
		var inv *InvalidError
		if err != nil {
			if !errors.As(err, &inv) {
				t.Fatalf("validate = %v, want an InvalidError", err)
			}
			return
		}
		if u.Email != NormalizeEmail(u.Email) || (!u.Operator && u.Role != RoleOwner && u.Role != RoleMember) {
			t.Errorf("validate gave %+v", u)
		}
		if again, err := validate(u); err != nil || again != u {
			t.Errorf("validate(validate(x)) = %+v, %v; want %+v", again, err, u)
		}
	})
}

// The dummy hash an unknown email is checked against costs what a real one costs: same
// algorithm and parameters, so a wrong email takes the time of a wrong password.
func TestDummyHashHasTheRealParameters(t *testing.T) {
	real, err := defaultHasher.hash(pw)
	if err != nil {
		t.Fatal(err)
	}
	params := func(h string) string { p := strings.Split(h, "$"); return strings.Join(p[1:4], "$") }
	if params(defaultHasher.dummy) != params(real) {
		t.Errorf("dummy %q and real %q hashes differ in parameters", params(defaultHasher.dummy), params(real))
	}
}
