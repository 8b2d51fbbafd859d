package files

import (
	"context"
	"errors"
	"testing"
	"time"
)

// grant runs acquire in a goroutine and delivers its release (or error) on a channel.
func grant(p *buildPool, project string, cost int64) chan func() {
	ch := make(chan func(), 1)
	go func() {
		rel, err := p.acquire(context.Background(), project, cost)
		if err != nil {
			rel = nil
		}
		ch <- rel
	}()
	return ch
}

// waitQueued waits until n builds are waiting in p.
func waitQueued(t *testing.T, p *buildPool, n int) {
	t.Helper()
	for i := 0; ; i++ {
		if w, _ := p.stats(); w == n {
			return
		}
		if i > 10000 {
			t.Fatalf("never %d builds waiting", n)
		}
		time.Sleep(time.Millisecond)
	}
}

// One project's flood waits in its own queue: another project's build takes the slot kept
// free of the flood, and when a slot frees, a third project goes before the flood's next.
func TestPoolSharesFairly(t *testing.T) {
	t.Parallel()
	p := newBuildPool(2, 3, 1000, time.Minute)
	ctx := context.Background()
	relA, err := p.acquire(ctx, "a", 1)
	if err != nil {
		t.Fatal(err)
	}
	flood := make(chan func(), 3) // the flood's builds, granted in any order
	for range 3 {
		go func() { flood <- <-grant(p, "a", 1) }()
	}
	waitQueued(t, p, 3)
	if _, err := p.acquire(ctx, "a", 1); !errors.Is(err, errPoolBusy) {
		t.Fatalf("acquire with a full queue = %v, want errPoolBusy", err)
	}
	relB, err := p.acquire(ctx, "b", 1) // a holds all it may: the other slot is b's at once
	if err != nil {
		t.Fatalf("acquire of another project during a flood = %v", err)
	}
	c := grant(p, "c", 1)
	waitQueued(t, p, 4)
	relA()
	select {
	case rel := <-c:
		if rel == nil {
			t.Fatal("c's build was refused")
		}
		rel()
	case <-flood:
		t.Fatal("the flooding project's next build went before the waiting project c")
	}
	relB()
	for i := range 3 {
		rel := <-flood
		if rel == nil {
			t.Fatalf("flood build %d refused", i)
		}
		rel()
	}
	if w, used := p.stats(); w != 0 || used != 0 || len(p.shares) != 0 {
		t.Errorf("after every release: %d waiting, %d bytes, %d shares", w, used, len(p.shares))
	}
}

// Builds reserve their memory estimate: one that does not fit waits for a release, one larger
// than the budget is refused, one that waits too long is refused busy.
func TestPoolMemoryBudget(t *testing.T) {
	t.Parallel()
	p := newBuildPool(4, 4, 100, time.Minute)
	ctx := context.Background()
	if _, err := p.acquire(ctx, "a", 101); !errors.Is(err, errPoolTooBig) {
		t.Fatalf("acquire over the budget = %v, want errPoolTooBig", err)
	}
	rel, err := p.acquire(ctx, "a", 60)
	if err != nil {
		t.Fatal(err)
	}
	if _, used := p.stats(); used != 60 {
		t.Errorf("bytes in use = %d, want 60", used)
	}
	b := grant(p, "b", 50)
	waitQueued(t, p, 1)
	rel()
	relB := <-b
	if relB == nil {
		t.Fatal("b refused after the budget freed")
	}
	short := newBuildPool(1, 4, 100, time.Millisecond)
	r, _ := short.acquire(ctx, "a", 1)
	if _, err := short.acquire(ctx, "b", 1); !errors.Is(err, errPoolBusy) {
		t.Errorf("acquire that waited past the limit = %v, want errPoolBusy", err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := short.acquire(cctx, "b", 1); !errors.Is(err, context.Canceled) {
		t.Errorf("acquire with a cancelled context = %v", err)
	}
	r()
	relB()
}
