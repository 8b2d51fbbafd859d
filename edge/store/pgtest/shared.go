package pgtest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// EnvURL names the variable that gives tests an existing server instead of a private one: the
// URL of a database on it (any database; the superuser's, as tests create and drop databases).
const EnvURL = "GATEHOUSE_TEST_POSTGRES_URL"

// tempPrefix names the temporary folders of the per-process servers.
const tempPrefix = "gatehouse-pgtest-"

// shared is the test process's server, started on the first URL call.
var shared struct {
	mu       sync.Mutex
	started  bool
	srv      *Server
	dir      string
	adminURL string
	err      error
	seq      atomic.Uint64
}

// URL returns the URL of a new, empty database for t, dropped at t's cleanup. The server is
// the one GATEHOUSE_TEST_POSTGRES_URL names, or else one private to the test process (see
// Main). Without PostgreSQL's binaries the test fails, saying how to install them.
func URL(t testing.TB) string {
	t.Helper()
	u, drop, err := NewDatabase()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := drop(); err != nil {
			t.Errorf("pgtest: drop the test's database: %v", err)
		}
	})
	return u
}

// NewDatabase is URL for a database whose life is not one test's (a store folder that
// subtests reopen): the caller drops it with drop, or leaves it to the end of the private
// server, which goes with all its databases when the process ends.
func NewDatabase() (url string, drop func() error, err error) {
	adminURL, err := sharedServer()
	if err != nil {
		return "", nil, err
	}
	name := fmt.Sprintf("gh_test_%d_%d", os.Getpid(), shared.seq.Add(1))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := createDatabase(ctx, adminURL, name); err != nil {
		return "", nil, err
	}
	u, err := withDatabase(adminURL, name)
	if err != nil {
		return "", nil, err
	}
	drop = func() error {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		return dropDatabase(ctx, adminURL, name)
	}
	return u, drop, nil
}

// sharedServer returns the admin URL of the process's server, starting it on first use.
func sharedServer() (string, error) {
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if shared.started {
		return shared.adminURL, shared.err
	}
	shared.started = true
	if u := os.Getenv(EnvURL); u != "" {
		shared.adminURL = u
		return u, nil
	}
	sweep()
	dir, err := os.MkdirTemp("", tempPrefix)
	if err != nil {
		shared.err = fmt.Errorf("pgtest: %w", err)
		return "", shared.err
	}
	if err := os.WriteFile(filepath.Join(dir, "owner.pid"), []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil {
		shared.err = fmt.Errorf("pgtest: %w", err)
		return "", shared.err
	}
	srv, err := Start(dir)
	if err != nil {
		_ = os.RemoveAll(dir)
		shared.err = err
		return "", err
	}
	shared.srv, shared.dir, shared.adminURL = srv, dir, srv.URL("postgres")
	return shared.adminURL, nil
}

// StopShared stops the process's private server (if one was started) and removes its folder.
// Main calls it after the tests; a process that ends without it leaves the server to stop by
// itself (its parent-death signal) and the folder to the next process's sweep.
func StopShared() error {
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if shared.srv == nil {
		return nil
	}
	err := shared.srv.Stop()
	if rerr := os.RemoveAll(shared.dir); err == nil {
		err = rerr
	}
	shared.srv, shared.started, shared.err = nil, false, nil
	return err
}

// Main runs the tests of a package that uses URL and stops its private server after them:
//
//	func TestMain(m *testing.M) { pgtest.Main(m) }
func Main(m *testing.M) {
	code := m.Run()
	if err := StopShared(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		if code == 0 {
			code = 1
		}
	}
	os.Exit(code)
}

// sweep removes the folders of private servers whose test process is gone (one killed before
// its Main could clean up) and whose server has stopped.
func sweep() {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), tempPrefix+"*"))
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "owner.pid")); err != nil {
			// Another process may have just made it (owner.pid comes next): leave it unless
			// it is old.
			if st, err := os.Stat(d); err != nil || time.Since(st.ModTime()) < time.Hour {
				continue
			}
		}
		if alive(filepath.Join(d, "owner.pid")) || alive(filepath.Join(d, "data", "postmaster.pid")) {
			continue
		}
		_ = os.RemoveAll(d)
	}
}

// alive reports whether the process whose id starts the file pidFile still runs.
func alive(pidFile string) bool {
	b, err := os.ReadFile(pidFile)
	if err != nil {
		return false
	}
	var pid int
	if _, err := fmt.Sscan(string(b), &pid); err != nil || pid <= 0 {
		return false
	}
	err = syscall.Kill(pid, 0)
	return err == nil || err == syscall.EPERM
}
