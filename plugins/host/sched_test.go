package host

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestSchedulerLeavesASlotToOtherProjects(t *testing.T) {
	s := newScheduler(Options{Slots: 2, CPUBudget: time.Hour, QueueLength: 8})
	var a, b share
	ctx := context.Background()
	far := time.Now().Add(time.Hour)
	if _, err := s.acquire(ctx, &a, far); err != nil {
		t.Fatalf("A's first acquire: %v", err)
	}
	// A holds all it may (Slots-1); its next call waits, B's does not.
	granted := make(chan error, 1)
	go func() { _, err := s.acquire(ctx, &a, far); granted <- err }()
	waitFor(t, func() bool { s.mu.Lock(); defer s.mu.Unlock(); return len(a.waiting) == 1 })
	if _, err := s.acquire(ctx, &b, time.Now()); err != nil {
		t.Fatalf("B's acquire while A waits = %v, want a slot at once", err)
	}
	s.release(&b, 0)
	s.release(&a, 0)
	if err := <-granted; err != nil {
		t.Fatalf("A's waiting acquire = %v, want the slot A released", err)
	}
	s.release(&a, 0)
}

func TestSchedulerTakesTurns(t *testing.T) {
	s := newScheduler(Options{Slots: 1, CPUBudget: time.Hour, QueueLength: 8})
	var a, b share
	ctx := context.Background()
	far := time.Now().Add(time.Hour)
	if _, err := s.acquire(ctx, &a, far); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var order []string
	var wg sync.WaitGroup
	enqueue := func(sh *share, name string, n int) {
		for range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if _, err := s.acquire(ctx, sh, far); err != nil {
					t.Errorf("%s: %v", name, err)
					return
				}
				mu.Lock()
				order = append(order, name)
				mu.Unlock()
				s.release(sh, 0)
			}()
			waitFor(t, func() bool { s.mu.Lock(); defer s.mu.Unlock(); return len(sh.waiting) > 0 })
		}
	}
	enqueue(&a, "A", 3)
	enqueue(&b, "B", 1)
	waitFor(t, func() bool { s.mu.Lock(); defer s.mu.Unlock(); return len(a.waiting) == 3 && len(b.waiting) == 1 })
	s.release(&a, 0)
	wg.Wait()
	if len(order) != 4 || order[0] != "B" {
		t.Errorf("order of grants after A's call = %v, want B first (A just had its turn)", order)
	}
}

func TestSchedulerRefusesOverBudgetAndFullQueue(t *testing.T) {
	s := newScheduler(Options{Slots: 2, CPUBudget: 100 * time.Millisecond, QueueLength: 1})
	var a, b share
	ctx := context.Background()
	far := time.Now().Add(time.Hour)
	if _, err := s.acquire(ctx, &a, far); err != nil {
		t.Fatal(err)
	}
	s.release(&a, 10*time.Second) // far more guest time than A's budget
	if _, err := s.acquire(ctx, &a, far); !errors.Is(err, ErrBusy) {
		t.Errorf("acquire over budget = %v, want ErrBusy at once", err)
	}
	if _, err := s.acquire(ctx, &b, far); err != nil {
		t.Errorf("another project's acquire = %v, want a slot", err)
	}
	// B holds its one slot; one call may wait, the next is refused.
	go func() { _, _ = s.acquire(ctx, &b, time.Now().Add(time.Hour)) }()
	waitFor(t, func() bool { s.mu.Lock(); defer s.mu.Unlock(); return len(b.waiting) == 1 })
	if _, err := s.acquire(ctx, &b, far); !errors.Is(err, ErrBusy) {
		t.Errorf("acquire with a full queue = %v, want ErrBusy", err)
	}
	// A caller giving up leaves the queue.
	cctx, cancel := context.WithCancel(ctx)
	s.release(&b, 0) // the waiter gets it
	waitFor(t, func() bool { s.mu.Lock(); defer s.mu.Unlock(); return len(b.waiting) == 0 })
	done := make(chan error, 1)
	go func() { _, err := s.acquire(cctx, &b, far); done <- err }()
	waitFor(t, func() bool { s.mu.Lock(); defer s.mu.Unlock(); return len(b.waiting) == 1 })
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled acquire = %v, want context.Canceled", err)
	}
	s.mu.Lock()
	if len(b.waiting) != 0 {
		t.Errorf("a cancelled waiter stayed queued")
	}
	s.mu.Unlock()
}

// waitFor polls cond (the scheduler's state changes in other goroutines
// with no event to await from outside).
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached")
		}
	}
}

// The hostile patterns of issue 14, each in project A while project B's
// filter is called over and over: every B call runs its filter and
// succeeds (never busy, pool_busy or circuit_open), and A is throttled.
func TestHostilePluginsOnlySlowTheirProject(t *testing.T) {
	patterns := []struct {
		name   string
		reg    Registration
		config map[string]string
	}{
		{"loop", Registration{Name: "loop", Limits: Limits{TimeoutMs: 100}}, nil},
		{"burner", Registration{Name: "burner", Limits: Limits{MemoryMB: 32, TimeoutMs: 100}}, map[string]string{"iterations": "100000000"}},
		{"grower", Registration{Name: "grower", Limits: Limits{MemoryMB: 128, TimeoutMs: 1000}}, nil},
		{"hog", Registration{Name: "hog", Limits: Limits{MemoryMB: 128, TimeoutMs: 1000}}, nil},
	}
	for _, pat := range patterns {
		t.Run(pat.name, func(t *testing.T) {
			h := newHost(t, func(o *Options) {
				o.Slots, o.CPUBudget, o.MemoryBudgetMB = 2, 100*time.Millisecond, 128
				o.BreakerThreshold = 1 << 30 // A keeps calling: the budget, not the breaker, must hold it
			})
			reg := pat.reg
			reg.Project, reg.Hooks, reg.OnError, reg.Config = "a", []string{HookFormsSubmit}, OnErrorClosed, pat.config
			mustRegister(t, h, reg)
			mustRegister(t, h, Registration{Project: "b", Name: "spamguard", Hooks: []string{HookFormsSubmit}, OnError: OnErrorClosed,
				Config: map[string]string{"blockedWords": "casino"}})
			ctx, stop := context.WithCancel(context.Background())
			var wg sync.WaitGroup
			var aCalls, aBusy atomic.Int64
			for range 4 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for ctx.Err() == nil {
						_, err := h.FormsSubmit(ctx, "a", "contact", msg(pat.name))
						aCalls.Add(1)
						if errors.Is(err, ErrBusy) {
							aBusy.Add(1)
						}
					}
				}()
			}
			// B runs until A has been refused for its budget a few times. B
			// paces itself (a call every 2 ms at most) so that its own guest
			// CPU time stays far under the budget: A's four callers keep its
			// one slot busy, far over it.
			bCalls := 0
			for aBusy.Load() < 20 || bCalls < 50 {
				v, err := h.FormsSubmit(context.Background(), "b", "contact", msg("casino chips"))
				if err != nil || v.Action != Reject {
					t.Fatalf("B's call %d during A's %s = %+v, %v; want its filter's reject", bCalls, pat.name, v, err)
				}
				bCalls++
				time.Sleep(2 * time.Millisecond)
				if bCalls > 20000 {
					t.Fatalf("A was never refused for its budget (%d calls)", aCalls.Load())
				}
			}
			stop()
			wg.Wait()
			st := h.Status("b")
			if st[0].Calls != int64(bCalls) || len(st[0].Errors) != 0 {
				t.Errorf("B's status = %+v, want %d calls and no errors", st[0], bCalls)
			}
			if a := h.Status("a")[0]; a.Errors[KindBusy] == 0 {
				t.Errorf("A's status = %+v, want busy refusals", a)
			}
			if used := h.mem.Used(); used > 128<<20 {
				t.Errorf("guests hold %d bytes, over the 128 MiB budget", used)
			}
		})
	}
}
