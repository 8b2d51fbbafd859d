package accounts_test

import (
	"context"
	"errors"
	"testing"

	"github.com/gatehouse-dev/gatehouse/edge/accounts"
	"github.com/gatehouse-dev/gatehouse/edge/redistest"
)

// The dashboard's other password checks share the sign-in throttle across nodes too: wrong
// current passwords in password changes on one node throttle the email's sign-in on the other,
// and made-up invite tokens on one node throttle the IP on the other.
func TestPasswordChangeAndInviteShareTheThrottle(t *testing.T) {
	ctx := context.Background()
	a, b := throttleNodes(t, redistest.Start(t))
	const pw = "a good password"
	if _, err := a.CreateUser(ctx, accounts.NewUser{Email: "ann@b.test", Password: pw, Org: "acme"}); err != nil {
		t.Fatal(err)
	}
	for i := range accounts.DefaultFailures {
		if err := a.ChangePassword(ctx, "ann@b.test", "wrong", "a new good password", ""); !errors.Is(err, accounts.ErrCredentials) {
			t.Fatalf("wrong current password %d = %v", i, err)
		}
	}
	var thr *accounts.ThrottledError
	if _, err := b.Login(ctx, "ann@b.test", pw, accounts.Client{IP: "10.0.0.1"}); !errors.As(err, &thr) {
		t.Errorf("sign-in on the other node after 10 wrong current passwords = %v, want ThrottledError", err)
	}
	for range accounts.DefaultFailures {
		if _, err := a.AcceptInvite(ctx, "made-up", pw, accounts.Client{IP: "10.6.6.6"}); !errors.Is(err, accounts.ErrNoInvite) {
			t.Fatalf("made-up token = %v", err)
		}
	}
	_, token, err := b.CreateInvite(ctx, "new@b.test", "acme", "", "ann@b.test")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.AcceptInvite(ctx, token, pw, accounts.Client{IP: "10.6.6.6"}); !errors.As(err, &thr) {
		t.Errorf("accepting from the IP on the other node after 10 made-up tokens = %v, want ThrottledError", err)
	}
	if _, err := b.AcceptInvite(ctx, token, pw, accounts.Client{IP: "10.7.7.7"}); err != nil {
		t.Errorf("accepting from another IP = %v", err)
	}
}
