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

// A project alone uses every slot; its flood then waits in its own queue, and the slots that
// free go first to the other projects waiting, in turn, then back to the flood.
func TestPoolSharesFairly(t *testing.T) {
	t.Parallel()
	p := newBuildPool(2, 3, 1000, time.Minute)
	ctx := context.Background()
	var relA [2]func()
	for i := range relA {
		rel, err := p.acquire(ctx, "a", 1) // alone: both slots
		if err != nil {
			t.Fatalf("build %d of a project alone = %v", i, err)
		}
		relA[i] = rel
	}
	flood := make(chan func(), 3) // the flood's builds, granted in any order
	for range 3 {
		go func() { flood <- <-grant(p, "a", 1) }()
	}
	waitQueued(t, p, 3)
	if _, err := p.acquire(ctx, "a", 1); !errors.Is(err, errPoolBusy) {
		t.Fatalf("acquire with a full queue = %v, want errPoolBusy", err)
	}
	b := grant(p, "b", 1)
	waitQueued(t, p, 4)
	c := grant(p, "c", 1)
	waitQueued(t, p, 5)
	var rels []func()
	for i, other := range []chan func(){b, c} {
		relA[i]()
		select {
		case rel := <-other:
			if rel == nil {
				t.Fatalf("project %d's build was refused", i)
			}
			rels = append(rels, rel)
		case <-flood:
			t.Fatal("the flooding project's next build went before a waiting project")
		}
	}
	for _, rel := range rels {
		rel()
	}
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
// than the budget takes all of it (it runs alone), one that waits too long is refused busy.
func TestPoolMemoryBudget(t *testing.T) {
	t.Parallel()
	p := newBuildPool(4, 4, 100, time.Minute)
	ctx := context.Background()
	big, err := p.acquire(ctx, "a", 1000)
	if err != nil {
		t.Fatalf("acquire over the budget = %v, want it to run alone", err)
	}
	if _, used := p.stats(); used != 100 {
		t.Errorf("a build over the budget reserved %d bytes, want the whole 100", used)
	}
	big()
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
