package host

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"
)

// benchData is a typical contact-form submission (about 700 bytes).
var benchData = map[string]any{
	"name":    "Ada Lovelace",
	"email":   "ada@example.test",
	"company": "Analytical Engines Ltd",
	"phone":   "+44 20 7946 0000",
	"message": strings.Repeat("I would like to know more about your plans for teams. ", 10),
	"consent": true,
}

// benchFormsSubmit measures FormsSubmit through the plugins in regs (none
// = the host's own overhead) and reports p50 and p99 per call.
func benchFormsSubmit(b *testing.B, regs ...Registration) {
	benchFormsSubmitOn(b, newHost(b, nil), regs...)
}

func benchFormsSubmitOn(b *testing.B, h *Host, regs ...Registration) {
	for _, r := range regs {
		mustRegister(b, h, r)
	}
	ctx := context.Background()
	for range 50 { // warm the pool and the guest heap
		if _, err := h.FormsSubmit(ctx, "demo", "contact", benchData); err != nil {
			b.Fatal(err)
		}
	}
	lat := make([]time.Duration, 0, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		v, err := h.FormsSubmit(ctx, "demo", "contact", benchData)
		lat = append(lat, time.Since(start))
		if err != nil || v.Action != Allow {
			b.Fatalf("FormsSubmit = %+v, %v", v, err)
		}
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds())/1e3, "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Nanoseconds())/1e3, "p99-µs")
}

var spamConfig = map[string]string{"blockedWords": "casino,loan,viagra,crypto,bitcoin,forex", "maxLinks": "2"}

// BenchmarkFormsSubmitNoPlugin is the baseline: a project without plugins.
func BenchmarkFormsSubmitNoPlugin(b *testing.B) { benchFormsSubmit(b) }

// BenchmarkFormsSubmitNoop is the per-call overhead of a PDK filter that
// allows everything, with the loop guard on (target: p50 < 10 µs).
func BenchmarkFormsSubmitNoop(b *testing.B) {
	benchFormsSubmit(b, Registration{Name: "noop", Hooks: []string{HookFormsSubmit}})
}

// BenchmarkFormsSubmitSpamguard is the example spam filter (target: p50 < 150 µs).
func BenchmarkFormsSubmitSpamguard(b *testing.B) {
	benchFormsSubmit(b, Registration{Name: "spamguard", Hooks: []string{HookFormsSubmit}, Config: spamConfig})
}

// benchInterpreted measures FormsSubmit through reg on the interpreter, as
// a node runs a module uploaded on another node until its machine code is
// compiled (compile.go).
func benchInterpreted(b *testing.B, reg Registration) {
	// A CPU budget the calls cannot spend (a fail-open plugin over budget
	// would be skipped, and measure nothing), and fail-closed, so that a
	// failed call fails the benchmark.
	h := tieredHost(b, nil, func(o *Options) { o.CPUBudget = time.Hour })
	reg.OnError = OnErrorClosed
	registerTiered(b, h, reg)
	benchFormsSubmitOn(b, h)
}

// BenchmarkFormsSubmitSpamguardInterpreted is the spam filter on the
// interpreter.
func BenchmarkFormsSubmitSpamguardInterpreted(b *testing.B) {
	benchInterpreted(b, Registration{Name: "spamguard", Hooks: []string{HookFormsSubmit}, Config: spamConfig})
}

// BenchmarkFormsSubmitNoopInterpreted is the no-op filter on the
// interpreter.
func BenchmarkFormsSubmitNoopInterpreted(b *testing.B) {
	benchInterpreted(b, Registration{Name: "noop", Hooks: []string{HookFormsSubmit}})
}

// BenchmarkNewModuleFirstCall measures what a node does when a module new
// to it arrives, from the module's bytes to the first call answered, on a
// host with an empty compilation cache: "interpreted" as for an upload made
// on another node (Precompile, then Register: the machine code follows in
// the background), "compiled" as for an upload on this node (Register
// compiles to machine code first).
func BenchmarkNewModuleFirstCall(b *testing.B) {
	for _, tiered := range []bool{true, false} {
		name := "compiled"
		if tiered {
			name = "interpreted"
		}
		b.Run(name, func(b *testing.B) {
			reg := Registration{Project: "demo", Name: "spamguard", Hooks: []string{HookFormsSubmit}, Config: spamConfig}
			for range b.N {
				b.StopTimer()
				dir := b.TempDir()
				h := tieredHost(b, nil, func(o *Options) { o.CacheDir = dir })
				b.StartTimer()
				if tiered {
					registerTiered(b, h, reg)
				} else {
					mustRegister(b, h, reg)
				}
				if v, err := h.FormsSubmit(context.Background(), "demo", "contact", benchData); err != nil || v.Action != Allow {
					b.Fatalf("FormsSubmit = %+v, %v", v, err)
				}
				b.StopTimer()
				_ = h.Close()
				b.StartTimer()
			}
		})
	}
}

// BenchmarkFormsSubmitNaiveSpam is the same filter decoding the whole
// input with encoding/json, for comparison.
func BenchmarkFormsSubmitNaiveSpam(b *testing.B) {
	benchFormsSubmit(b, Registration{Name: "naivespam", Hooks: []string{HookFormsSubmit}, Config: spamConfig})
}

// BenchmarkFormsSubmitNoopParallel runs the no-op filter from parallel
// callers through the instance pool.
func BenchmarkFormsSubmitNoopParallel(b *testing.B) {
	h := newHost(b, nil)
	mustRegister(b, h, Registration{Name: "noop", Hooks: []string{HookFormsSubmit}})
	ctx := context.Background()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := h.FormsSubmit(ctx, "demo", "contact", benchData); err != nil {
				b.Error(err)
				return
			}
		}
	})
}
