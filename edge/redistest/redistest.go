// Package redistest gives tests a real Redis: Debian's redis-server started privately on a free
// loopback port in a temporary folder, with persistence off, and stopped when the test ends. It
// is the shared-Redis counterpart of edge/store/pgtest.
//
// Start reuses the server GATEHOUSE_TEST_REDIS_URL names when that is set (tests then keep apart
// by the key prefixes and channel names they choose, see Name); Private always starts one, for a
// test that stops and restarts Redis. A machine without redis-server fails the test with the
// command that installs it: a test that ran nothing is not a pass.
package redistest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// EnvURL names the variable holding the URL of a Redis that tests may share.
const EnvURL = "GATEHOUSE_TEST_REDIS_URL"

// Server is a Redis tests talk to.
type Server struct {
	// URL is redis://127.0.0.1:PORT (or the shared server's URL).
	URL string
	// Addr is host:port.
	Addr string

	t       testing.TB
	dir     string
	mu      sync.Mutex
	cmd     *exec.Cmd
	exited  chan struct{}
	private bool
	log     bytes.Buffer
}

// Start returns the Redis of GATEHOUSE_TEST_REDIS_URL, or a private one.
func Start(t testing.TB) *Server {
	t.Helper()
	if u := os.Getenv(EnvURL); u != "" {
		opt, err := redis.ParseURL(u)
		if err != nil {
			t.Fatalf("redistest: %s: %v", EnvURL, err)
		}
		return &Server{URL: u, Addr: opt.Addr, t: t}
	}
	return Private(t)
}

// Private starts a redis-server of the test's own (stopped by t.Cleanup).
func Private(t testing.TB) *Server {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		bin = "/usr/bin/redis-server"
		if _, serr := os.Stat(bin); serr != nil {
			t.Fatalf("redistest: redis-server is not installed (%v): run `make test-deps-redis` or `apt-get install redis-server`", err)
		}
	}
	s := &Server{t: t, dir: t.TempDir(), private: true}
	t.Cleanup(s.Stop)
	// A free port is taken between our probe and the server's bind only by a race with another
	// process: try again on another port then.
	for attempt := 0; ; attempt++ {
		port, err := freePort()
		if err != nil {
			t.Fatalf("redistest: %v", err)
		}
		s.Addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
		s.URL = "redis://" + s.Addr
		err = s.launch(bin)
		if err == nil {
			return s
		}
		if attempt == 4 {
			t.Fatalf("redistest: redis-server did not start: %v\n%s", err, s.output())
		}
	}
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// launch starts redis-server on s.Addr and waits until it answers PING.
func (s *Server) launch(bin string) error {
	_, port, _ := net.SplitHostPort(s.Addr)
	cmd := exec.Command(bin,
		"--port", port, "--bind", "127.0.0.1", "--dir", s.dir,
		"--save", "", "--appendonly", "no", // nothing survives a restart: a restart loses everything
		"--daemonize", "no", "--protected-mode", "yes", "--logfile", "",
		"--pidfile", filepath.Join(s.dir, "redis.pid"))
	s.mu.Lock()
	s.log.Reset()
	cmd.Stdout, cmd.Stderr = &lockedWriter{s}, &lockedWriter{s}
	s.mu.Unlock()
	// Pdeathsig kills the server when the thread that started it ends, so a test binary that
	// dies (a timeout's panic, SIGKILL) leaves no redis-server behind; the thread is kept for
	// the server's lifetime.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	exited := make(chan struct{})
	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with this goroutine
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		_ = cmd.Wait()
		close(exited)
	}()
	if err := <-started; err != nil {
		return err
	}
	s.mu.Lock()
	s.cmd, s.exited = cmd, exited
	s.mu.Unlock()
	c := redis.NewClient(&redis.Options{Addr: s.Addr, MaxRetries: -1})
	defer c.Close()
	deadline := time.Now().Add(20 * time.Second)
	for wait := time.Millisecond; ; wait = min(2*wait, 100*time.Millisecond) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		err := c.Ping(ctx).Err()
		cancel()
		if err == nil {
			return nil
		}
		select {
		case <-exited:
			return fmt.Errorf("redis-server exited: %w", err)
		case <-time.After(wait):
		}
		if time.Now().After(deadline) {
			s.Stop()
			return fmt.Errorf("redis-server does not answer on %s: %w", s.Addr, err)
		}
	}
}

type lockedWriter struct{ s *Server }

func (w *lockedWriter) Write(p []byte) (int, error) {
	w.s.mu.Lock()
	defer w.s.mu.Unlock()
	return w.s.log.Write(p)
}

func (s *Server) output() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.log.String()
}

// Stop kills a private server and waits for it to exit (everything it held is lost). A shared
// server is left alone.
func (s *Server) Stop() {
	s.mu.Lock()
	cmd, exited := s.cmd, s.exited
	s.cmd = nil
	s.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Kill()
	<-exited
}

// Restart starts a stopped private server again on the same port, empty (like a Redis without
// persistence after a crash).
func (s *Server) Restart() {
	s.t.Helper()
	if !s.private {
		s.t.Fatal("redistest: Restart needs a Private server")
	}
	s.Stop()
	bin, _ := exec.LookPath("redis-server")
	if bin == "" {
		bin = "/usr/bin/redis-server"
	}
	if err := s.launch(bin); err != nil {
		s.t.Fatalf("redistest: restarting redis-server: %v\n%s", err, s.output())
	}
}

// Client returns a client of the server, closed when the test ends.
func (s *Server) Client() *redis.Client {
	opt, err := redis.ParseURL(s.URL)
	if err != nil {
		s.t.Fatalf("redistest: %v", err)
	}
	c := redis.NewClient(opt)
	s.t.Cleanup(func() { _ = c.Close() })
	return c
}

// Name returns a name unique to this run ("prefix-<random>"), for the key prefixes and channels
// of tests that may share one server.
func Name(prefix string) string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return prefix + "-" + hex.EncodeToString(b[:])
}
