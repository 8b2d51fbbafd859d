package host

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

func msg(s string) map[string]any { return map[string]any{"message": s} }

func TestInfiniteLoopTimesOut(t *testing.T) {
	reg := prometheus.NewRegistry()
	h := newHost(t, func(o *Options) { o.Registerer = reg })
	mustRegister(t, h, Registration{Name: "loop", Hooks: []string{HookFormsSubmit}, OnError: OnErrorClosed,
		Limits: Limits{TimeoutMs: 400}})
	ctx := context.Background()
	start := time.Now()
	_, err := h.FormsSubmit(ctx, "demo", "contact", msg("loop"))
	if !errors.Is(err, ErrTimeout) || !errors.Is(err, ErrPluginFailed) {
		t.Fatalf("FormsSubmit(loop) error = %v, want ErrTimeout", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("FormsSubmit(loop) took %v, want about 400ms", d)
	}
	// The next call is served (by a fresh instance).
	if v, err := h.FormsSubmit(ctx, "demo", "contact", msg("hi")); err != nil || v.Action != Allow {
		t.Fatalf("FormsSubmit after timeout = %+v, %v; want allow", v, err)
	}
	if got := counterValue(h.metrics.timeouts.WithLabelValues("demo", "loop", HookFormsSubmit)); got != 1 {
		t.Errorf("timeouts metric = %v, want 1", got)
	}
	if got := counterValue(h.metrics.calls.WithLabelValues("demo", "loop", HookFormsSubmit)); got != 2 {
		t.Errorf("calls metric = %v, want 2", got)
	}
	if n := seriesCount(t, reg, "gatehouse_plugin_call_duration_seconds"); n != 1 {
		t.Errorf("latency histogram series = %d, want 1", n)
	}
}

func TestLoopingPluginsDoNotStallOthers(t *testing.T) {
	h := newHost(t, func(o *Options) { o.PoolSize = 2 })
	mustRegister(t, h, Registration{Name: "loop", Hooks: []string{HookFormsSubmit}, Limits: Limits{TimeoutMs: 300}})
	mustRegister(t, h, Registration{Project: "other", Name: "noop", Hooks: []string{HookFormsSubmit}})
	ctx := context.Background()
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _ = h.FormsSubmit(ctx, "demo", "contact", msg("loop")) // fail-open: allow
		}()
	}
	time.Sleep(20 * time.Millisecond)
	start := time.Now()
	for range 20 {
		if _, err := h.FormsSubmit(ctx, "other", "contact", msg("hi")); err != nil {
			t.Fatalf("FormsSubmit(other) while loops run: %v", err)
		}
	}
	if d := time.Since(start); d > 250*time.Millisecond {
		t.Errorf("20 calls of another project took %v while loops ran", d)
	}
	wg.Wait()
}

func TestMemoryGrowerCapped(t *testing.T) {
	h := newHost(t, nil)
	mustRegister(t, h, Registration{Name: "grow", Hooks: []string{HookFormsSubmit}, OnError: OnErrorClosed,
		Limits: Limits{MemoryMB: 16, TimeoutMs: 2000}})
	ctx := context.Background()
	_, err := h.FormsSubmit(ctx, "demo", "contact", msg("grow"))
	if !errors.Is(err, ErrPluginFailed) {
		t.Fatalf("FormsSubmit(grow) error = %v, want ErrPluginFailed", err)
	}
	if !errors.Is(err, ErrMemoryLimit) {
		t.Errorf("FormsSubmit(grow) error = %v, want ErrMemoryLimit", err)
	}
	if v, err := h.FormsSubmit(ctx, "demo", "contact", msg("hi")); err != nil || v.Action != Allow {
		t.Fatalf("FormsSubmit after memory fault = %+v, %v; want allow", v, err)
	}
}

func TestTrap(t *testing.T) {
	h := newHost(t, nil)
	mustRegister(t, h, Registration{Name: "trap", Hooks: []string{HookFormsSubmit}, OnError: OnErrorClosed})
	ctx := context.Background()
	_, err := h.FormsSubmit(ctx, "demo", "contact", msg("trap"))
	if !errors.Is(err, ErrTrap) {
		t.Fatalf("FormsSubmit(trap) error = %v, want ErrTrap", err)
	}
	if v, err := h.FormsSubmit(ctx, "demo", "contact", msg("hi")); err != nil || v.Action != Allow {
		t.Fatalf("FormsSubmit after trap = %+v, %v; want allow", v, err)
	}
	logs := strings.Join(h.Logs("demo", "trap"), "\n")
	if !strings.Contains(logs, "index out of range") {
		t.Errorf("plugin log lacks the panic message:\n%s", logs)
	}
}

func TestFailOpenAndBreaker(t *testing.T) {
	h := newHost(t, func(o *Options) { o.BreakerThreshold = 2; o.BreakerCooldown = time.Hour })
	mustRegister(t, h, Registration{Name: "trap", Hooks: []string{HookFormsSubmit}}) // filters default to open
	ctx := context.Background()
	for i := range 2 {
		if v, err := h.FormsSubmit(ctx, "demo", "contact", msg("trap")); err != nil || v.Action != Allow {
			t.Fatalf("call %d: FormsSubmit(trap, fail-open) = %+v, %v; want allow", i, v, err)
		}
	}
	pl := h.find("demo", "trap")
	if pl.breaker.allow(time.Now()) {
		t.Fatalf("breaker still closed after 2 failures")
	}
	if got := counterValue(h.metrics.errors.WithLabelValues("demo", "trap", HookFormsSubmit, "trap")); got != 2 {
		t.Errorf("errors{kind=trap} = %v, want 2", got)
	}
	// While open, a good input is not even tried.
	_, _ = h.FormsSubmit(ctx, "demo", "contact", msg("hi"))
	if got := counterValue(h.metrics.errors.WithLabelValues("demo", "trap", HookFormsSubmit, "circuit_open")); got != 1 {
		t.Errorf("errors{kind=circuit_open} = %v, want 1", got)
	}
	// Re-registering replaces the plugin and resets its breaker.
	mustRegister(t, h, Registration{Name: "trap", Hooks: []string{HookFormsSubmit}, OnError: OnErrorClosed})
	if _, err := h.FormsSubmit(ctx, "demo", "contact", msg("hi")); err != nil {
		t.Errorf("FormsSubmit after re-register: %v", err)
	}
}

func TestFetchRefused(t *testing.T) {
	hits := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits++
		if r.URL.Path == "/redirect" {
			http.Redirect(w, r, "http://elsewhere.test/", http.StatusFound)
			return
		}
		if r.Header.Get("X-Secret") != "k1" {
			w.WriteHeader(400)
		}
		fmt.Fprint(w, "hello")
	}))
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	allow := []string{"http://127.0.0.1:" + u.Port(), "https://api.example.com"}
	cfg := map[string]string{"secret": "k1"}
	ctx := context.Background()

	// A policy refusing loopback: 127.0.0.1 is refused even though it is in allowHosts.
	h := newHost(t, nil)
	mustRegister(t, h, Registration{Name: "fetcher", Hooks: []string{HookFormsSubmit}, AllowHosts: allow, Config: cfg})
	cases := []struct{ url, code string }{
		{srv.URL + "/x", "FETCH_DENIED"},                                // loopback
		{"http://[::ffff:127.0.0.1]:" + u.Port() + "/", "FETCH_DENIED"}, // not allowed host, mapped
		{"https://evil.example.org/", "FETCH_DENIED"},                   // not in allowHosts
		{"http://api.example.com/", "FETCH_DENIED"},                     // wrong scheme
		{"https://api.example.com:8443/", "FETCH_DENIED"},               // wrong port
		{"https://169.254.169.254/latest/meta-data", "FETCH_DENIED"},    // metadata, not allowed
		{"ftp://api.example.com/", "FETCH_DENIED"},
	}
	for _, c := range cases {
		v, err := h.FormsSubmit(ctx, "demo", "contact", msg(c.url))
		if err != nil || v.Code != c.code {
			t.Errorf("fetch %s: verdict %+v, %v; want %s", c.url, v, err, c.code)
		}
	}
	if hits != 0 {
		t.Errorf("server was reached %d times under a policy refusing loopback", hits)
	}

	// Test policy: loopback allowed, so the allowed host is reached, the
	// secret is inserted, and a redirect to a host not allowed is refused.
	h2 := newHost(t, func(o *Options) { o.Egress = testEgress{allow: loopbackOnly} })
	mustRegister(t, h2, Registration{Name: "fetcher", Hooks: []string{HookFormsSubmit}, AllowHosts: allow, Config: cfg})
	if v, err := h2.FormsSubmit(ctx, "demo", "contact", msg(srv.URL+"/x")); err != nil || v.Code != "FETCH_200" || v.Message != "hello" {
		t.Errorf("fetch allowed host: %+v, %v; want FETCH_200 hello", v, err)
	}
	if v, _ := h2.FormsSubmit(ctx, "demo", "contact", msg(srv.URL+"/redirect")); v.Code != "FETCH_DENIED" {
		t.Errorf("fetch with redirect to a host not allowed: %+v, want FETCH_DENIED", v)
	}
	if v, _ := h2.FormsSubmit(ctx, "demo", "contact", map[string]any{"message": srv.URL + "/x", "times": 5}); v.Code != "FETCH_LIMIT" {
		t.Errorf("5 fetches in one call: %+v, want FETCH_LIMIT", v)
	}

	// A module importing http_fetch needs allowHosts.
	err := h2.Register(ctx, Registration{Project: "demo", Name: "fetcher2", Module: mods["fetcher"], Hooks: []string{HookFormsSubmit}})
	if !errors.Is(err, ErrInvalidModule) {
		t.Errorf("Register(fetcher without allowHosts) = %v, want ErrInvalidModule", err)
	}
}

func TestRegisterValidation(t *testing.T) {
	h := newHost(t, nil)
	ctx := context.Background()
	cases := []struct {
		name string
		reg  Registration
		want error
	}{
		{"no module", Registration{Project: "p", Name: "x", Hooks: []string{HookFormsSubmit}}, ErrInvalidRegistration},
		{"bad hook", Registration{Project: "p", Name: "x", Module: mods["noop"], Hooks: []string{"forms.delete"}}, ErrInvalidRegistration},
		{"bad onError", Registration{Project: "p", Name: "x", Module: mods["noop"], Hooks: []string{HookFormsSubmit}, OnError: "maybe"}, ErrInvalidRegistration},
		{"memory too small", Registration{Project: "p", Name: "x", Module: mods["noop"], Hooks: []string{HookFormsSubmit}, Limits: Limits{MemoryMB: 4}}, ErrInvalidRegistration},
		{"bad allow host", Registration{Project: "p", Name: "x", Module: mods["noop"], Hooks: []string{HookFormsSubmit}, AllowHosts: []string{"gopher://x"}}, ErrInvalidRegistration},
		{"not wasm", Registration{Project: "p", Name: "x", Module: []byte("hello"), Hooks: []string{HookFormsSubmit}}, ErrInvalidModule},
		{"no marker", Registration{Project: "p", Name: "x", Module: minimalModule, Hooks: []string{HookFormsSubmit}}, ErrInvalidModule},
	}
	for _, c := range cases {
		if err := h.Register(ctx, c.reg); !errors.Is(err, c.want) {
			t.Errorf("Register(%s) = %v, want %v", c.name, err, c.want)
		}
	}
	if got := h.Plugins("p"); len(got) != 0 {
		t.Errorf("Plugins after failed registrations = %v, want none", got)
	}
}

// minimalModule is an empty but valid Wasm module (no ABI marker).
var minimalModule = []byte{0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00}

func TestGuestSandbox(t *testing.T) {
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	h := newHost(t, func(o *Options) {
		o.Now = func() time.Time { return now }
		o.Rand = func() ioReader { return zeroReader{} }
	})
	mustRegister(t, h, Registration{Name: "printer", Hooks: []string{HookFormsSubmit}})
	v, err := h.FormsSubmit(context.Background(), "demo", "contact", msg("hi"))
	if err != nil || v.Action != Rewrite {
		t.Fatalf("FormsSubmit(printer) = %+v, %v; want rewrite", v, err)
	}
	want := map[string]any{"now": "2026-11-22T12:00:00Z", "rand": "0000000000000000", "env": false, "fs": false, "message": "hi!"}
	for k, w := range want {
		if v.Data[k] != w {
			t.Errorf("guest saw %s = %v, want %v", k, v.Data[k], w)
		}
	}
	logs := strings.Join(h.Logs("demo", "printer"), "\n")
	for _, s := range []string{"stdout: hello stdout contact", "stderr: hello stderr", "WARN hello log"} {
		if !strings.Contains(logs, s) {
			t.Errorf("plugin log lacks %q:\n%s", s, logs)
		}
	}
}

func TestReplaceAndUnregister(t *testing.T) {
	h := newHost(t, nil)
	ctx := context.Background()
	mustRegister(t, h, Registration{Name: "spamguard", Hooks: []string{HookFormsSubmit}, Config: map[string]string{"blockedWords": "casino"}})
	mustRegister(t, h, Registration{Name: "noop", Hooks: []string{HookFormsSubmit}})
	if v, _ := h.FormsSubmit(ctx, "demo", "f", msg("casino")); v.Action != Reject {
		t.Fatalf("before replace: %+v, want reject", v)
	}
	// Replacing spamguard's config swaps it in place (order kept).
	mustRegister(t, h, Registration{Name: "spamguard", Hooks: []string{HookFormsSubmit}, Config: map[string]string{"blockedWords": "loan"}})
	if got := strings.Join(h.Plugins("demo"), ","); got != "spamguard,noop" {
		t.Errorf("Plugins = %s, want spamguard,noop", got)
	}
	if v, _ := h.FormsSubmit(ctx, "demo", "f", msg("casino")); v.Action != Allow {
		t.Errorf("after replace, casino: %+v, want allow", v)
	}
	if v, _ := h.FormsSubmit(ctx, "demo", "f", msg("loan")); v.Action != Reject {
		t.Errorf("after replace, loan: %+v, want reject", v)
	}
	h.Unregister("demo", "spamguard")
	if v, _ := h.FormsSubmit(ctx, "demo", "f", msg("loan")); v.Action != Allow {
		t.Errorf("after unregister: %+v, want allow", v)
	}
}

func counterValue(c prometheus.Counter) float64 {
	var m dto.Metric
	if err := c.Write(&m); err != nil {
		return -1
	}
	return m.GetCounter().GetValue()
}

func seriesCount(t *testing.T, g prometheus.Gatherer, name string) int {
	t.Helper()
	mfs, err := g.Gather()
	if err != nil {
		t.Fatalf("Gather: %v", err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name {
			return len(mf.GetMetric())
		}
	}
	return 0
}
