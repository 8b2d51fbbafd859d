package host

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/plugins/internal/wasmbuild"
)

// mods holds every guest module the tests use, built once by TestMain from
// plugins/examples and testdata/guests.
var mods map[string][]byte

// cacheDir is a compilation cache shared by the tests' hosts, so each
// module is compiled to machine code once per test binary.
var cacheDir string

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	flag.Parse()
	dir, err := os.MkdirTemp("", "gatehouse-plugins-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	cacheDir = filepath.Join(dir, "cache")
	srcs := map[string]string{}
	for _, ex := range []string{"spamguard", "redactor", "captcha-hmac", "turnstile"} {
		srcs[ex] = filepath.Join("..", "examples", ex)
	}
	for _, g := range []string{"noop", "loop", "grow", "trap", "fetcher", "naivespam", "printer", "burner", "hog"} {
		srcs[g] = filepath.Join("testdata", "guests", g)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	start := time.Now()
	mods, err = wasmbuild.All(ctx, dir, srcs)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if mods["grower"], err = os.ReadFile(filepath.Join("testdata", "grower.wasm")); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if testing.Verbose() {
		fmt.Fprintf(os.Stderr, "built %d guest modules in %v\n", len(mods), time.Since(start).Round(time.Millisecond))
	}
	return m.Run()
}

// newHost returns a Host closed at the end of the test.
func newHost(t testing.TB, mutate func(*Options)) *Host {
	t.Helper()
	o := DefaultOptions()
	o.CacheDir = cacheDir
	o.Egress = testEgress{} // connects nowhere; tests of http_fetch give their own
	if mutate != nil {
		mutate(&o)
	}
	h, err := New(o)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { _ = h.Close() })
	return h
}

func mustRegister(t testing.TB, h *Host, r Registration) {
	t.Helper()
	if r.Project == "" {
		r.Project = "demo"
	}
	if r.Module == nil {
		r.Module = mods[r.Name]
	}
	if r.Limits.TimeoutMs == 0 {
		// Tests that are not about time get a deadline a loaded CI machine cannot miss.
		r.Limits.TimeoutMs = 2000
	}
	if err := h.Register(context.Background(), r); err != nil {
		t.Fatalf("Register(%s): %v", r.Name, err)
	}
}

type ioReader = io.Reader

// zeroReader is a deterministic random source for tests.
type zeroReader struct{}

func (zeroReader) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}
