package main

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// hostileModules builds the guests of plugins/host/testdata named, and copies its grower.
func hostileModules(t *testing.T, names ...string) map[string]string {
	t.Helper()
	dir := t.TempDir()
	src := filepath.Join("..", "..", "..", "plugins", "host", "testdata")
	out := map[string]string{}
	for _, n := range names {
		path := filepath.Join(dir, n+".wasm")
		if n == "grower" {
			b, err := os.ReadFile(filepath.Join(src, "grower.wasm"))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, b, 0o600); err != nil {
				t.Fatal(err)
			}
		} else {
			cmd := exec.Command("go", "build", "-buildmode=c-shared", "-o", path, ".")
			cmd.Dir = filepath.Join(src, "guests", n)
			cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0")
			if b, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("building %s: %v\n%s", n, err, b)
			}
		}
		out[n] = path
	}
	return out
}

// twoProjects is a tenants document with projects a and b, each with a form contact and a
// forms.submit plugin.
func twoProjects(aPlugin, bPlugin string) string {
	return `
orgs:
  - slug: acme
    projects:
      - id: a
        keys: [{name: web, value: pk_live_a_web, products: [forms]}]
        forms: [{slug: contact, published: true, fields: [{name: message, type: text, required: true}]}]
        plugins:
          - ` + aPlugin + `
  - slug: umbrella
    projects:
      - id: b
        keys: [{name: web, value: pk_live_b_web, products: [forms]}]
        forms: [{slug: contact, published: true, fields: [{name: message, type: text, required: true}]}]
        plugins:
          - ` + bPlugin + `
`
}

func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// A project over its plugin CPU budget is refused at once with 503 PLUGIN_BUSY (fail-closed)
// and Retry-After, while another project's filter runs. With a budget of 10 ms of CPU a
// second, a stream of cheap but successful calls spends it (the breaker never opens).
func TestPluginBusyThroughTheGateway(t *testing.T) {
	t.Parallel()
	ex := buildExamples(t, "spamguard")
	data := t.TempDir()
	cfg := writeFile(t, data, "config.yaml", "plugins:\n  cpu_budget_ms: 10\nforms:\n  rate_per_minute: 1000000\n")
	tenants := writeFile(t, data, "tenants.yaml", twoProjects(
		fmt.Sprintf("{name: spam, module: %q, hooks: [forms.submit], onError: closed, config: {blockedWords: casino}}", ex["spamguard"]),
		fmt.Sprintf("{name: spam, module: %q, hooks: [forms.submit], onError: closed, config: {blockedWords: casino}}", ex["spamguard"])))
	p := startProc(t, "--data", data, "--config", cfg, "--tenants", tenants)
	submit := func(project, message string) (int, string, http.Header) {
		req, _ := http.NewRequest("POST", p.url+"/forms/forms/contact/submit", strings.NewReader(`{"data":{"message":"`+message+`"}}`))
		req.Header.Set("X-API-Key", "pk_live_"+project+"_web")
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var b strings.Builder
		_, _ = bufio.NewReader(resp.Body).WriteTo(&b)
		return resp.StatusCode, b.String(), resp.Header
	}
	busy := false
	for i := 0; i < 20000 && !busy; i++ {
		code, body, h := submit("a", "hello")
		switch {
		case code == 201:
		case code == 503 && strings.Contains(body, `"error":"PLUGIN_BUSY"`) && h.Get("Retry-After") != "":
			busy = true
		default:
			t.Fatalf("a's submission %d = %d %s (Retry-After %q), want 201 or 503 PLUGIN_BUSY with Retry-After", i, code, body, h.Get("Retry-After"))
		}
	}
	if !busy {
		t.Fatal("a was never refused for its CPU budget")
	}
	if code, body, _ := submit("b", "cheap casino"); code != 422 {
		t.Errorf("b's spam while a is over budget = %d %s, want 422 from b's filter", code, body)
	}
	if code, body, _ := submit("b", "hello"); code != 201 {
		t.Errorf("b's submission while a is over budget = %d %s, want 201", code, body)
	}
	if a := p.plugins(t, "a").Items[0]; a.Errors["busy"] < 1 || len(a.Errors) != 1 {
		t.Errorf("a's plugin = %+v, want busy refusals only", a)
	}
	if b := p.plugins(t, "b").Items[0]; b.Calls != 2 || len(b.Errors) != 0 {
		t.Errorf("b's plugin = %+v, want 2 calls and no errors", b)
	}
	p.stop(t)
}

// isolationRun is one measured run of bench-plugins-isolation.
type isolationRun struct {
	name               string
	rps, p50, p99      float64 // B's submissions/s and latency in ms
	requests, non2xx   int
	rssMax, rssAfter   int64 // the gateway's RSS in MB during the load and 5 s after
	aOK, aBusy, aOther int64 // A's answers: 2xx, 503 PLUGIN_BUSY, anything else
	bCalls, aCalls     int64 // B's filter calls, A's plugin calls (admin API)
	bErrors            map[string]int64
	aErrors            map[string]int64
}

// TestPluginsIsolation is make bench-plugins-isolation: the real gateway with projects A and B;
// B's form takes submissions from 16 concurrent wrk clients (another process) for
// GATEHOUSE_BENCH_DURATION (default 10s) while A's form is sent a steady stream of submissions
// (8 clients, a 40 ms pause after each answer) that run A's plugin: a benign filter for the
// baseline, then each hostile pattern of issue 14. It prints B's throughput, p50 and p99 and
// the gateway's RSS for each, with the ratio to the baseline, and checks behaviour only: B's
// filter ran for every submission and never failed, A was refused or throttled, RSS < 1 GB.
func TestPluginsIsolation(t *testing.T) {
	if os.Getenv("GATEHOUSE_BENCH_ISOLATION") == "" {
		t.Skip("a benchmark: run make bench-plugins-isolation")
	}
	wrk, err := exec.LookPath("wrk")
	if err != nil {
		t.Fatal("wrk is needed (apt-get install wrk)")
	}
	duration := 10 * time.Second
	if d, err := time.ParseDuration(os.Getenv("GATEHOUSE_BENCH_DURATION")); err == nil {
		duration = d
	}
	mods := hostileModules(t, "loop", "burner", "hog", "grower")
	ex := buildExamples(t, "spamguard")
	patterns := []struct{ name, plugin string }{
		{"baseline", fmt.Sprintf("{name: filter, module: %q, hooks: [forms.submit], config: {blockedWords: casino}}", ex["spamguard"])},
		{"loop", fmt.Sprintf("{name: loop, module: %q, hooks: [forms.submit], limits: {memoryMB: 16, timeoutMs: 100}}", mods["loop"])},
		{"burner", fmt.Sprintf("{name: burner, module: %q, hooks: [forms.submit], limits: {memoryMB: 32, timeoutMs: 100}, config: {iterations: \"1000000\"}}", mods["burner"])},
		// The same burner, light enough (250,000 iterations) to succeed within 100 ms on a loaded
		// machine, so that the breaker never opens and the scheduler alone holds it.
		{"burner-ok", fmt.Sprintf("{name: burner, module: %q, hooks: [forms.submit], limits: {memoryMB: 32, timeoutMs: 100}, config: {iterations: \"250000\"}}", mods["burner"])},
		{"grower", fmt.Sprintf("{name: grower, module: %q, hooks: [forms.submit], limits: {memoryMB: 128, timeoutMs: 1000}}", mods["grower"])},
		{"hog", fmt.Sprintf("{name: hog, module: %q, hooks: [forms.submit], limits: {memoryMB: 128, timeoutMs: 1000}, config: {mb: \"64\"}}", mods["hog"])},
	}
	bPlugin := fmt.Sprintf("{name: spam, module: %q, hooks: [forms.submit], onError: open, config: {blockedWords: casino}}", ex["spamguard"])
	var runs []isolationRun
	only := os.Getenv("GATEHOUSE_BENCH_PATTERNS") // e.g. "grower,hog": the baseline and those
	for _, pat := range patterns {
		if only != "" && pat.name != "baseline" && !strings.Contains(","+only+",", ","+pat.name+",") {
			continue
		}
		r := runIsolation(t, wrk, duration, pat.name, twoProjects(pat.plugin, bPlugin))
		runs = append(runs, r)
		if r.non2xx != 0 || r.bCalls < int64(r.requests) || len(r.bErrors) != 0 {
			t.Errorf("%s: B had %d non-2xx answers of %d, its filter ran %d times with errors %v: want every submission filtered, none failed",
				pat.name, r.non2xx, r.requests, r.bCalls, r.bErrors)
		}
		if pat.name != "baseline" && len(r.aErrors) == 0 {
			t.Errorf("%s: A's hostile plugin was never refused, throttled or failed", pat.name)
		}
		if r.rssMax >= 1024 {
			t.Errorf("%s: gateway RSS reached %d MB, want < 1 GB", pat.name, r.rssMax)
		}
	}
	base := runs[0]
	fmt.Printf("\nB: 16 wrk clients on b's form for %v each; A: 8 clients, 40 ms pause; GOMAXPROCS=%s\n", duration, os.Getenv("GOMAXPROCS"))
	fmt.Printf("%-9s %9s %8s %8s %8s %8s %9s %9s  %-28s %s\n", "pattern", "B req/s", "B p50", "B p99", "p99 x", "req/s x", "RSS max", "RSS after", "A answers ok/busy/other", "A plugin calls, errors")
	for _, r := range runs {
		fmt.Printf("%-9s %9.0f %6.2fms %6.2fms %7.2fx %7.2fx %7dMB %7dMB  %-28s %v\n", r.name, r.rps, r.p50, r.p99, r.p99/base.p99, r.rps/base.rps,
			r.rssMax, r.rssAfter, fmt.Sprintf("%d/%d/%d", r.aOK, r.aBusy, r.aOther), fmt.Sprint(r.aCalls, r.aErrors))
	}
}

func runIsolation(t *testing.T, wrk string, duration time.Duration, name, tenants string) isolationRun {
	t.Helper()
	data := t.TempDir()
	cfg := writeFile(t, data, "config.yaml", "storage:\n  sync_writes: false\nforms:\n  rate_per_minute: 1000000000\n")
	file := writeFile(t, data, "tenants.yaml", tenants)
	p := startProcEnv(t, []string{"GATEHOUSE_LOG_LEVEL=error"}, "--data", data, "--config", cfg, "--tenants", file)
	pid := p.cmd.Process.Pid
	script := writeFile(t, data, "post.lua", `wrk.method = "POST"
wrk.body = '{"data":{"message":"hello there, a clean message"}}'
wrk.headers["Content-Type"] = "application/json"
wrk.headers["X-API-Key"] = "pk_live_b_web"
`)
	r := isolationRun{name: name}
	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var rssMax atomic.Int64
	wg.Add(1)
	go func() {
		defer wg.Done()
		for ctx.Err() == nil {
			rssMax.Store(max(rssMax.Load(), rssMB(pid)))
			time.Sleep(100 * time.Millisecond)
		}
	}()
	var aOK, aBusy, aOther atomic.Int64
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				req, _ := http.NewRequestWithContext(ctx, "POST", p.url+"/forms/forms/contact/submit", strings.NewReader(`{"data":{"message":"loop"}}`))
				req.Header.Set("X-API-Key", "pk_live_a_web")
				req.Header.Set("Content-Type", "application/json")
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					continue
				}
				var b strings.Builder
				_, _ = bufio.NewReader(resp.Body).WriteTo(&b)
				resp.Body.Close()
				switch {
				case resp.StatusCode < 300:
					aOK.Add(1)
				case strings.Contains(b.String(), "PLUGIN_BUSY"):
					aBusy.Add(1)
				default:
					aOther.Add(1)
				}
				time.Sleep(40 * time.Millisecond)
			}
		}()
	}
	time.Sleep(time.Second) // A's pattern under way before B is measured
	out, err := exec.Command(wrk, "-t2", "-c16", "-d"+duration.String(), "--latency", "-s", script, p.url+"/forms/forms/contact/submit").CombinedOutput()
	stop()
	wg.Wait()
	if err != nil {
		t.Fatalf("%s: wrk: %v\n%s", name, err, out)
	}
	parseWrk(t, string(out), &r)
	r.aOK, r.aBusy, r.aOther = aOK.Load(), aBusy.Load(), aOther.Load()
	r.rssMax = rssMax.Load()
	time.Sleep(5 * time.Second)
	r.rssAfter = rssMB(pid)
	b, a := p.plugins(t, "b").Items[0], p.plugins(t, "a").Items[0]
	r.bCalls, r.bErrors, r.aCalls, r.aErrors = b.Calls, b.Errors, a.Calls, a.Errors
	_ = p.cmd.Process.Signal(syscall.SIGTERM) // logs are at error level: p.stop would miss "storage closed"
	if err := <-p.done; err != nil {
		t.Errorf("%s: gatehouse exited with %v: %s", name, err, p.stderr)
	}
	p.done <- nil
	return r
}

var (
	wrkLatency  = regexp.MustCompile(`(?m)^\s+(50|99)%\s+([0-9.]+)(us|ms|s)\s*$`)
	wrkRequests = regexp.MustCompile(`(?m)^\s+(\d+) requests in`)
	wrkRate     = regexp.MustCompile(`(?m)^Requests/sec:\s+([0-9.]+)`)
	wrkNon2xx   = regexp.MustCompile(`(?m)Non-2xx or 3xx responses: (\d+)`)
)

func parseWrk(t *testing.T, out string, r *isolationRun) {
	t.Helper()
	for _, m := range wrkLatency.FindAllStringSubmatch(out, -1) {
		v, _ := strconv.ParseFloat(m[2], 64)
		switch m[3] {
		case "us":
			v /= 1000
		case "s":
			v *= 1000
		}
		if m[1] == "50" {
			r.p50 = v
		} else {
			r.p99 = v
		}
	}
	if m := wrkRequests.FindStringSubmatch(out); m != nil {
		r.requests, _ = strconv.Atoi(m[1])
	}
	if m := wrkRate.FindStringSubmatch(out); m != nil {
		r.rps, _ = strconv.ParseFloat(m[1], 64)
	}
	if m := wrkNon2xx.FindStringSubmatch(out); m != nil {
		r.non2xx, _ = strconv.Atoi(m[1])
	}
	if r.p99 == 0 || r.rps == 0 {
		t.Fatalf("%s: cannot read wrk's output:\n%s", r.name, out)
	}
}

// rssMB is the resident set of process pid, in MB (0 when it cannot be read).
func rssMB(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb >> 10
		}
	}
	return 0
}
