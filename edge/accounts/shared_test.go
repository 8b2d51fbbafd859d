package accounts

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/edge/ratelimit/redisrate"
	"github.com/gatehouse-dev/gatehouse/edge/redistest"
	"github.com/gatehouse-dev/gatehouse/edge/store"
)

// Two nodes (two services over one store, as with the postgres backend) share the sign-in
// throttle through a real Redis: failures spread over both nodes still stop the 11th attempt
// on either, for the email and for the IP, even with the right password. Without the shared
// buckets each node would allow ten of its own.
func TestSharedThrottleAcrossNodes(t *testing.T) {
	srv := redistest.Start(t)
	db, err := store.Open(store.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	name := redistest.Name("signin")
	node := func() *Service {
		lim := redisrate.New(srv.Client(), redisrate.Options{Name: name, Rate: DefaultFailures, Per: time.Minute, Timeout: 10 * time.Second})
		return New(db, Options{Shared: lim})
	}
	a, b := node(), node()
	ctx := context.Background()
	for _, e := range []string{"ann@b.test", "bob@b.test"} {
		if _, err := a.CreateUser(ctx, NewUser{Email: e, Password: pw, Org: "acme"}); err != nil {
			t.Fatal(err)
		}
	}
	// Five failures for ann on each node, each from its own IP.
	for i := 0; i < DefaultFailures; i++ {
		n := []*Service{a, b}[i%2]
		if _, err := n.Login(ctx, "ann@b.test", "wrong", Client{IP: "10.0.0." + string(rune('a'+i))}); !errors.Is(err, ErrCredentials) {
			t.Fatalf("failure %d = %v", i+1, err)
		}
	}
	var thr *ThrottledError
	for _, n := range []*Service{a, b} {
		if _, err := n.Login(ctx, "ann@b.test", pw, Client{IP: "10.9.0.1"}); !errors.As(err, &thr) || thr.RetryAfter <= 0 || thr.RetryAfter > time.Minute {
			t.Errorf("11th attempt for ann = %v, want ThrottledError within a minute", err)
		}
	}
	// Another email is not throttled by ann's failures.
	if _, err := a.Login(ctx, "bob@b.test", pw, Client{IP: "10.9.0.2"}); err != nil {
		t.Errorf("bob = %v", err)
	}
	// One IP trying many emails across the nodes is throttled too.
	for i := 0; i < DefaultFailures; i++ {
		_, _ = []*Service{a, b}[i%2].Login(ctx, "x"+string(rune('a'+i))+"@b.test", "wrong", Client{IP: "10.6.6.6"})
	}
	if _, err := b.Login(ctx, "bob@b.test", pw, Client{IP: "10.6.6.6"}); !errors.As(err, &thr) {
		t.Errorf("11th attempt from one IP = %v, want ThrottledError", err)
	}
	// Each node alone saw only five failures of ann: its own counts would let it through.
	if d := max(a.byEmail.wait("ann@b.test"), b.byEmail.wait("ann@b.test")); d != 0 {
		t.Fatalf("a node's own count already throttles ann (%v): the test shows nothing", d)
	}
}
