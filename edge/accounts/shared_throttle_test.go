package accounts_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/edge/accounts"
	"github.com/gatehouse-dev/gatehouse/edge/ratelimit/redisrate"
	"github.com/gatehouse-dev/gatehouse/edge/redistest"
	"github.com/gatehouse-dev/gatehouse/edge/store"
)

var _ accounts.Throttle = (*redisrate.Throttle)(nil)

// Two nodes (two services on one store) share the failed sign-in count through Redis: ten
// failures for one email, split between the nodes, throttle the eleventh attempt on either; a
// node whose Redis is gone falls back on its own count.
func TestSignInThrottleSharedByNodes(t *testing.T) {
	ctx := context.Background()
	srv := redistest.Private(t)
	a, b := throttleNodes(t, srv)
	const pw = "a good password"
	if _, err := a.CreateUser(ctx, accounts.NewUser{Email: "ann@b.test", Password: pw, Operator: true}); err != nil {
		t.Fatal(err)
	}
	for i := range accounts.DefaultFailures {
		n := []*accounts.Service{a, b}[i%2]
		if _, err := n.Login(ctx, "ann@b.test", "wrong", accounts.Client{IP: "10.0.1." + string(rune('a'+i))}); !errors.Is(err, accounts.ErrCredentials) {
			t.Fatalf("failure %d = %v", i, err)
		}
	}
	for i, n := range []*accounts.Service{a, b} {
		var thr *accounts.ThrottledError
		_, err := n.Login(ctx, "ann@b.test", pw, accounts.Client{IP: "10.0.2.1"})
		if !errors.As(err, &thr) || thr.RetryAfter <= 0 || thr.RetryAfter > time.Minute {
			t.Fatalf("node %d: 11th attempt = %v, want ThrottledError within a minute (5 failures here, 10 in all)", i, err)
		}
	}
	if _, err := a.Login(ctx, "ann@b.test", "wrong", accounts.Client{IP: "10.0.3.1"}); err == nil {
		t.Fatal("wrong password accepted")
	}

	// Redis gone: each node counts alone (b saw 5 failures of bob: not throttled; 5 more are).
	srv.Stop()
	if _, err := b.CreateUser(ctx, accounts.NewUser{Email: "bob@b.test", Password: pw, Operator: true}); err != nil {
		t.Fatal(err)
	}
	for i := range accounts.DefaultFailures {
		if _, err := b.Login(ctx, "bob@b.test", "wrong", accounts.Client{IP: "10.0.4." + string(rune('a'+i))}); !errors.Is(err, accounts.ErrCredentials) {
			t.Fatalf("failure %d with Redis down = %v", i, err)
		}
	}
	var thr *accounts.ThrottledError
	if _, err := b.Login(ctx, "bob@b.test", pw, accounts.Client{IP: "10.0.5.1"}); !errors.As(err, &thr) {
		t.Fatalf("11th attempt on one node with Redis down = %v, want ThrottledError from its own count", err)
	}
	if _, err := a.Login(ctx, "bob@b.test", pw, accounts.Client{IP: "10.0.5.1"}); err != nil {
		t.Fatalf("the other node with Redis down = %v, want a sign-in (it counts alone)", err)
	}
}

// throttleNodes returns two services on one store (two nodes) that share the sign-in
// throttle through srv.
func throttleNodes(t *testing.T, srv *redistest.Server) (a, b *accounts.Service) {
	db, err := store.Open(store.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	name := redistest.Name("login")
	node := func() *accounts.Service {
		s, err := accounts.NewService(accounts.Options{DB: db, SharedThrottle: redisrate.NewThrottle(redisrate.ThrottleOptions{Redis: srv.Client(),
			Name: name, Max: accounts.DefaultFailures, Per: time.Minute, Timeout: 2 * time.Second})})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	return node(), node()
}
