package host

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

// tieredHost returns a host whose background compilations to machine code
// wait until release is closed (nil: until the host closes).
func tieredHost(t testing.TB, release <-chan struct{}, mutate func(*Options)) *Host {
	t.Helper()
	return newHost(t, func(o *Options) {
		o.beforeNative = func(ctx context.Context) {
			select {
			case <-release:
			case <-ctx.Done():
			}
		}
		if mutate != nil {
			mutate(o)
		}
	})
}

// registerTiered registers r as a node does after hearing of an upload made
// on another node: Precompile, then Register.
func registerTiered(t testing.TB, h *Host, r Registration) {
	t.Helper()
	if r.Project == "" {
		r.Project = "demo"
	}
	if err := h.Precompile(context.Background(), r.Project, mods[r.Name]); err != nil {
		t.Fatalf("Precompile(%s): %v", r.Name, err)
	}
	mustRegister(t, h, r)
}

// tiers reports how many of a plugin's idle instances run interpreted and
// how many run machine code.
func tiers(t *testing.T, h *Host, project, name string) (interpreted, native int) {
	t.Helper()
	pl := h.find(project, name)
	if pl == nil {
		t.Fatalf("plugin %s not registered", name)
	}
	pl.pool.mu.Lock()
	defer pl.pool.mu.Unlock()
	for _, inst := range pl.pool.idle {
		if inst.native {
			native++
		} else {
			interpreted++
		}
	}
	return interpreted, native
}

// A module precompiled (an upload made on another node) serves from the
// interpreter while its machine code is compiled, and gives the same answers
// on machine code afterwards.
func TestInterpretedUntilCompiled(t *testing.T) {
	release := make(chan struct{})
	h := tieredHost(t, release, nil)
	reg := Registration{Name: "spamguard", Hooks: []string{HookFormsSubmit},
		Config: map[string]string{"blockedWords": "casino, loan", "rejectCode": "SPAM_DETECTED"}}
	registerTiered(t, h, reg)
	inputs := []map[string]any{
		{"email": "a@b.test", "message": "Hello, I like your product", "n": 3},
		{"email": "a@b.test", "message": "Best CASINO offers"},
		{"message": "cheap \u006coan \u00e9"},
		{"message": "see http://a.test https://b.test http://c.test"},
		{"message": "see http://a.test https://b.test"},
	}
	verdicts := func() []FormVerdict {
		var out []FormVerdict
		for _, in := range inputs {
			v, err := h.FormsSubmit(context.Background(), "demo", "contact", in)
			if err != nil {
				t.Fatalf("FormsSubmit(%v): %v", in, err)
			}
			out = append(out, v)
		}
		return out
	}

	ce := h.find("demo", "spamguard").compiled
	before := verdicts()
	if ce.native.Load() != nil {
		t.Fatal("machine code ready while its compilation was held back")
	}
	if i, n := tiers(t, h, "demo", "spamguard"); i == 0 || n != 0 {
		t.Fatalf("before the compilation: %d interpreted and %d compiled instances idle, want interpreted only", i, n)
	}
	if before[0].Action != Allow || before[1].Action != Reject || before[1].Code != "SPAM_DETECTED" {
		t.Fatalf("interpreted verdicts = %+v, want allow then reject", before)
	}

	close(release)
	<-ce.done
	if ce.native.Load() == nil {
		t.Fatal("no machine code after the background compilation")
	}
	after := verdicts()
	if !reflect.DeepEqual(before, after) {
		t.Errorf("verdicts on machine code = %+v, want the interpreter's %+v", after, before)
	}
	if i, n := tiers(t, h, "demo", "spamguard"); i != 0 || n == 0 {
		t.Errorf("after the switch: %d interpreted and %d compiled instances idle, want compiled only", i, n)
	}

}

// The interpreted tier keeps issue 14's limits: the guard stops a loop at
// its deadline and when the caller leaves, the memory allocator refuses a
// grow past the limit, and the guest time is charged to the project.
func TestInterpretedTierKeepsLimits(t *testing.T) {
	// An interpreted call's deadline is its timeout times interpretedSlack,
	// within MaxTimeout; a budget the slow interpreter cannot use up before
	// the grow reaches its limit.
	h := tieredHost(t, nil, func(o *Options) { o.MaxTimeout = 10 * time.Second; o.CPUBudget = o.MaxTimeout })
	registerTiered(t, h, Registration{Name: "loop", Hooks: []string{HookFormsSubmit}, OnError: OnErrorClosed,
		Limits: Limits{TimeoutMs: 50}})
	registerTiered(t, h, Registration{Project: "other", Name: "grow", Hooks: []string{HookFormsSubmit}, OnError: OnErrorClosed,
		Limits: Limits{MemoryMB: 16}})
	for _, pl := range [][2]string{{"demo", "loop"}, {"other", "grow"}} {
		if i, n := tiers(t, h, pl[0], pl[1]); i == 0 || n != 0 {
			t.Fatalf("%s: %d interpreted and %d compiled instances, want interpreted only", pl[1], i, n)
		}
	}
	ctx := context.Background()
	_, err := h.FormsSubmit(ctx, "demo", "contact", msg("loop"))
	if !errors.Is(err, ErrTimeout) || !strings.Contains(err.Error(), "after 1s") {
		t.Fatalf("interpreted FormsSubmit(loop) error = %v, want ErrTimeout after 1s (50ms × %d)", err, interpretedSlack)
	}
	h.sched.mu.Lock()
	left := h.projects["demo"].share.tokens
	h.sched.mu.Unlock()
	if left >= h.opts.CPUBudget {
		t.Errorf("CPU budget left after an interpreted loop = %v, want it charged (budget %v)", left, h.opts.CPUBudget)
	}
	gone, cancel := context.WithCancel(ctx)
	go func() {
		// The caller leaves while the guest loops: the runtime stops it.
		for h.running.Load() == 0 {
			select {
			case <-gone.Done():
				return
			default:
			}
		}
		cancel()
	}()
	if _, err := h.FormsSubmit(gone, "demo", "contact", msg("loop")); !errors.Is(err, context.Canceled) {
		t.Fatalf("interpreted FormsSubmit(loop) with the caller gone = %v, want context.Canceled", err)
	}
	cancel()

	if _, err := h.FormsSubmit(ctx, "other", "contact", msg("grow")); !errors.Is(err, ErrMemoryLimit) {
		t.Fatalf("interpreted FormsSubmit(grow) error = %v, want ErrMemoryLimit", err)
	}
	if v, err := h.FormsSubmit(ctx, "other", "contact", msg("hi")); err != nil || v.Action != Allow {
		t.Fatalf("interpreted FormsSubmit after a memory fault = %+v, %v; want allow", v, err)
	}
	if used := h.mem.Used(); used == 0 {
		t.Errorf("memory budget shows no guest memory while interpreted instances are idle")
	}
}
