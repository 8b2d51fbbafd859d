package membership

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/gatehouse-dev/gatehouse/edge/journal"
	"github.com/gatehouse-dev/gatehouse/edge/tenancy"
)

// fakeSource serves connections from a map, counts reads, and can hold a read until released.
type fakeSource struct {
	mu    sync.Mutex
	conns map[string]Connection
	err   error
	reads atomic.Int32
	// hold, when set, is closed by the test to let a read return; started is signalled first.
	hold    chan struct{}
	started chan struct{}
}

func (f *fakeSource) ActiveConnection(_ context.Context, project string) (Connection, error) {
	f.reads.Add(1)
	f.mu.Lock()
	c, ok := f.conns[project]
	err := f.err
	hold, started := f.hold, f.started
	f.mu.Unlock()
	if hold != nil {
		started <- struct{}{}
		<-hold
	}
	if err != nil {
		return Connection{}, err
	}
	if !ok {
		return Connection{}, tenancy.ErrNotFound
	}
	return c, nil
}

func (f *fakeSource) set(project string, c Connection) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.conns[project] = c
}

var (
	connA = Connection{Name: "a", Active: true, IdpPublishableKey: "pk_test_Y2xlcmsuZXhhbXBsZS5jb20k", IdpInstanceDomain: "clerk.example.com", IdpSecretKey: "sk_test_secret"}
	connB = Connection{Name: "b", Active: true, IdpPublishableKey: "pk_live_Y2xlcmsubmV4dC5leGFtcGxlJA", IdpInstanceDomain: "next.example", SignUpEnabled: true}
)

func TestServiceCachesAndInvalidatesPerProject(t *testing.T) {
	t.Parallel()
	src := &fakeSource{conns: map[string]Connection{"p1": connA, "p2": connA}}
	s := newTestService(t, src)
	ctx := context.Background()
	for i := 0; i < 5; i++ {
		if _, err := s.Config(ctx, "p1"); err != nil {
			t.Fatalf("Config(p1): %v", err)
		}
		if _, err := s.Config(ctx, "none"); !errors.Is(err, ErrNoActiveConnection) {
			t.Fatalf("Config(none) = %v, want ErrNoActiveConnection", err)
		}
	}
	if n := src.reads.Load(); n != 2 {
		t.Errorf("source reads after 5 Config calls on two projects = %d, want 2 (cached, misses too)", n)
	}
	src.set("p1", connB)
	src.set("p2", connB)
	_, _ = s.Config(ctx, "p2")
	s.Changed(ctx, []journal.Change{{Op: "updated", Kind: "connection", Project: "p1", Name: "a"}, {Op: "updated", Kind: "key", Org: "o", Project: "p2", Name: "web"}})
	a1, _ := s.Config(ctx, "p1")
	a2, _ := s.Config(ctx, "p2")
	if a1 == nil || a2 == nil || a1.ETag != a2.ETag {
		t.Errorf("after Changed(p1 connection): p1 and p2 answers = %v, %v; want both to be connection b", a1, a2)
	}
	s.Changed(ctx, []journal.Change{{Op: "created", Kind: "connection", Project: "none", Name: "main"}})
	src.set("none", connA)
	if _, err := s.Config(ctx, "none"); err != nil {
		t.Errorf("after a connection was created: Config(none) = %v, want an answer", err)
	}
	s.Changed(ctx, []journal.Change{{Op: "deleted", Kind: "project", Project: "p1"}})
	src.mu.Lock()
	delete(src.conns, "p1")
	src.mu.Unlock()
	if _, err := s.Config(ctx, "p1"); !errors.Is(err, ErrNoActiveConnection) {
		t.Errorf("after the project was deleted: Config(p1) = %v, want ErrNoActiveConnection", err)
	}
}

// TestServiceReadRacingInvalidation holds a read of the old state while an apply invalidates
// the cache: the old answer goes to that caller but is not cached.
func TestServiceReadRacingInvalidation(t *testing.T) {
	t.Parallel()
	hold := make(chan struct{})
	src := &fakeSource{conns: map[string]Connection{"p": connA}, hold: hold, started: make(chan struct{}, 1)}
	s := newTestService(t, src)
	ctx := context.Background()
	done := make(chan *Answer)
	go func() {
		a, _ := s.Config(ctx, "p")
		done <- a
	}()
	<-src.started // the read has connection a in hand
	src.mu.Lock()
	src.conns["p"] = connB
	src.hold = nil
	src.mu.Unlock()
	s.Changed(ctx, []journal.Change{{Op: "updated", Kind: "connection", Project: "p", Name: "b"}})
	close(hold)
	stale := <-done
	fresh, err := s.Config(ctx, "p")
	if err != nil {
		t.Fatal(err)
	}
	if stale == nil || stale.ETag == fresh.ETag {
		t.Errorf("Config after an invalidation that raced a read = %s, want connection b's answer", fresh.Body)
	}
}

func TestServiceSourceError(t *testing.T) {
	t.Parallel()
	boom := errors.New("disk on fire")
	src := &fakeSource{conns: map[string]Connection{}, err: boom}
	s := newTestService(t, src)
	if _, err := s.Config(context.Background(), "p"); !errors.Is(err, boom) || errors.Is(err, ErrNoActiveConnection) {
		t.Errorf("Config with a failing source = %v, want it to wrap %v", err, boom)
	}
	if _, err := s.Config(context.Background(), "p"); src.reads.Load() != 2 || err == nil {
		t.Errorf("a failed read was cached (reads %d, err %v)", src.reads.Load(), err)
	}
}

func newTestService(t *testing.T, src Source) *Service {
	t.Helper()
	s, err := NewService(Options{Source: src})
	if err != nil {
		t.Fatalf("NewService: %v", err)
	}
	return s
}
