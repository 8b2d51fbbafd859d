package host

import (
	"context"
	"errors"
	"testing"
	"time"
)

// A guest refused memory at the server's ceiling fails for memory, not as
// a trap (wazero's own page limit would refuse the grow silently).
func TestMemoryAtTheCeilingIsMemory(t *testing.T) {
	h := newHost(t, func(o *Options) { o.MaxMemoryMB = 24 })
	mustRegister(t, h, Registration{Name: "grow", Hooks: []string{HookFormsSubmit}, OnError: OnErrorClosed, Limits: Limits{MemoryMB: 24}})
	_, err := h.FormsSubmit(context.Background(), "demo", "contact", msg("grow"))
	if !errors.Is(err, ErrMemoryLimit) {
		t.Errorf("FormsSubmit(grow at the ceiling) = %v, want ErrMemoryLimit", err)
	}
	if st := h.Status("demo")[0]; st.Errors[KindMemory] != 1 || st.Errors[KindTrap] != 0 {
		t.Errorf("errors by kind = %v, want one memory and no trap", st.Errors)
	}
}

// The memory budget is shared between projects: one project's grower is
// refused at its share (kind memory) while another's plugin keeps its
// memory, and the grown instance is closed after its call.
func TestMemoryBudgetSharesBetweenProjects(t *testing.T) {
	h := newHost(t, func(o *Options) { o.MemoryBudgetMB, o.CPUBudget = 64, time.Hour })
	mustRegister(t, h, Registration{Project: "a", Name: "grower", Hooks: []string{HookFormsSubmit}, OnError: OnErrorClosed,
		Limits: Limits{MemoryMB: 128}})
	mustRegister(t, h, Registration{Project: "b", Name: "noop", Hooks: []string{HookFormsSubmit}, OnError: OnErrorClosed})
	ctx := context.Background()
	before := h.mem.Used()
	for i := range 3 {
		_, err := h.FormsSubmit(ctx, "a", "contact", msg("grow"))
		if !errors.Is(err, ErrMemoryLimit) {
			t.Fatalf("grower call %d past its project's 32 MiB share = %v, want ErrMemoryLimit", i, err)
		}
		if used := h.mem.Used(); used > 64<<20 {
			t.Fatalf("guests hold %d bytes, over the 64 MiB budget", used)
		}
		if v, err := h.FormsSubmit(ctx, "b", "contact", msg("hi")); err != nil || v.Action != Allow {
			t.Fatalf("B's call after A's grower = %+v, %v; want allow", v, err)
		}
	}
	h.bg.Wait() // the refills of the grower's pool
	if used := h.mem.Used(); used > before+4<<20 {
		t.Errorf("guests hold %d bytes after the grower's calls, %d before: the grown instances stayed", used, before)
	}
	if st := h.Status("a")[0]; st.Errors[KindMemory] != 3 {
		t.Errorf("A's errors = %v, want 3 memory", st.Errors)
	}
}

// Within its limit and the budget, the grower succeeds, and the instance
// that grew to 128 MiB is not kept warm.
func TestGrowerThatSucceedsIsNotKept(t *testing.T) {
	h := newHost(t, func(o *Options) { o.MemoryBudgetMB = 512 })
	mustRegister(t, h, Registration{Name: "grower", Hooks: []string{HookFormsSubmit}, OnError: OnErrorClosed, Limits: Limits{MemoryMB: 128}})
	before := h.mem.Used()
	if v, err := h.FormsSubmit(context.Background(), "demo", "contact", msg("grow")); err != nil || v.Action != Allow {
		t.Fatalf("FormsSubmit(grower within limits) = %+v, %v; want allow", v, err)
	}
	h.bg.Wait()
	if used := h.mem.Used(); used > before+4<<20 {
		t.Errorf("guests hold %d bytes after the call, %d before: the 128 MiB instance stayed", used, before)
	}
}
