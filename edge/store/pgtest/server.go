// Package pgtest starts private PostgreSQL servers for tests, benchmarks and scripts, from
// Debian's server binaries (/usr/lib/postgresql/*/bin, the newest version; `make test-deps`
// installs the postgresql package when they are missing).
//
// A test asks for a database with URL(t): a fresh, empty database on a server private to the
// test process, started on the first call and stopped when the process ends (the package's
// TestMain calls Main(m)), or on the server GATEHOUSE_TEST_POSTGRES_URL names when it is set
// (make shares one server between the packages' test processes that way). Each URL is a new
// database, dropped at the test's cleanup.
//
// A program or script that needs a server of its own (the multi-node test, benchmarks) calls
// Start(dir) and Stop; StartStandby adds a streaming (optionally synchronous) standby of a
// server and Promote makes it the primary, for failover tests. The server listens on a free loopback port only (no Unix socket),
// trusts local connections as the superuser postgres, keeps fsync on (durability tests rely
// on it) and small shared buffers. When we run as root, initdb and postgres run as the
// unprivileged `postgres` user, as PostgreSQL requires; the server also gets SIGINT (a fast
// shutdown) when the process that started it dies, so a killed test run leaves no server.
package pgtest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
)

// ErrNoBinaries reports that PostgreSQL's server binaries are not installed.
var ErrNoBinaries = errors.New("pgtest: no PostgreSQL server binaries (initdb, postgres) under /usr/lib/postgresql/*/bin: `make test-deps` installs them (Debian package postgresql)")

// binGlob is where Debian puts the server binaries of each installed major version.
const binGlob = "/usr/lib/postgresql/*/bin"

// BinDir returns the binaries folder of the newest PostgreSQL installed, or ErrNoBinaries.
func BinDir() (string, error) {
	dirs, _ := filepath.Glob(binGlob)
	dirs = slices.DeleteFunc(dirs, func(d string) bool {
		return !isExec(filepath.Join(d, "initdb")) || !isExec(filepath.Join(d, "postgres"))
	})
	if len(dirs) == 0 {
		return "", ErrNoBinaries
	}
	version := func(d string) float64 {
		v, _ := strconv.ParseFloat(filepath.Base(filepath.Dir(d)), 64)
		return v
	}
	slices.SortFunc(dirs, func(a, b string) int {
		switch va, vb := version(a), version(b); {
		case va < vb:
			return -1
		case va > vb:
			return 1
		}
		return 0
	})
	return dirs[len(dirs)-1], nil
}

func isExec(path string) bool {
	st, err := os.Stat(path)
	return err == nil && !st.IsDir() && st.Mode()&0o111 != 0
}

// Server is a running private PostgreSQL server.
type Server struct {
	dir    string
	port   int
	proc   *os.Process
	exited chan struct{}
	// waitErr is the server's exit status, set before exited is closed.
	waitErr error
}

// Dir is the folder the server keeps its data (data/) and log (postgres.log) in.
func (s *Server) Dir() string { return s.dir }

// Port is the loopback TCP port the server listens on.
func (s *Server) Port() int { return s.port }

// URL returns the URL of database db on the server, as the superuser postgres.
func (s *Server) URL(db string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", s.port, db)
}

// FailoverURL returns the URL of database db on s and on standby (s's standby, see
// StartStandby) together, as a client that follows a failover is configured: both hosts, and
// target_session_attrs=read-write so that it connects to whichever of them takes writes.
func (s *Server) FailoverURL(standby *Server, db string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d,127.0.0.1:%d/%s?sslmode=disable&target_session_attrs=read-write",
		s.port, standby.port, db)
}

// Start starts a server on the cluster in dir/data, creating the cluster first when it is
// not there (so Start on the folder of a stopped or killed server restarts it with its data,
// on its former port when that is free, so its clients' URLs still hold). It returns once
// the server takes connections.
func Start(dir string) (*Server, error) {
	return startIn(dir, "initdb", func(bin, data string) *exec.Cmd {
		return exec.Command(filepath.Join(bin, "initdb"), "-D", data, "-U", "postgres", "--auth=trust",
			"-E", "UTF8", "--locale=C", "--no-sync")
	})
}

// startIn starts a server on the cluster in dir/data, made first by the command create
// returns (named what in errors) when dir holds none, run as the server's user; for Start
// (initdb) and StartStandby (pg_basebackup).
func startIn(dir, what string, create func(bin, data string) *exec.Cmd) (*Server, error) {
	bin, err := BinDir()
	if err != nil {
		return nil, err
	}
	dir, err = filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("pgtest: %w", err)
	}
	cred, err := credential(dir)
	if err != nil {
		return nil, err
	}
	data := filepath.Join(dir, "data")
	if _, err := os.Stat(filepath.Join(data, "PG_VERSION")); err != nil {
		cmd := create(bin, data)
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
		if out, err := cmd.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("pgtest: %s: %w\n%s", what, err, out)
		}
	}
	var lastErr error
	for attempt := 0; attempt < 5; attempt++ {
		s, err := start(bin, dir, cred)
		if err == nil {
			return s, nil
		}
		lastErr = err
	}
	return nil, lastErr
}

// credential returns who the server runs as: nil (ourselves) unless we are root, then the
// postgres user, who gets dir and the right to reach it.
func credential(dir string) (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, fmt.Errorf("pgtest: running as root needs the unprivileged user postgres (the Debian package postgresql creates it): %w", err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	err = filepath.Walk(dir, func(p string, _ os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, uid, gid)
	})
	if err != nil {
		return nil, fmt.Errorf("pgtest: give %s to postgres: %w", dir, err)
	}
	// The folders above dir must let postgres through (t.TempDir's are 0700).
	for p := filepath.Dir(dir); p != "/" && p != "."; p = filepath.Dir(p) {
		st, err := os.Stat(p)
		if err != nil {
			return nil, err
		}
		if st.Mode().Perm()&0o001 == 0 {
			if err := os.Chmod(p, st.Mode().Perm()|0o001); err != nil {
				return nil, fmt.Errorf("pgtest: let postgres reach %s: %w", dir, err)
			}
		}
	}
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
}

// start runs postgres on a free port and waits until it answers: the port the folder's
// server had before when it is free (clients of a restarted server find it again), else a
// new one.
func start(bin, dir string, cred *syscall.Credential) (*Server, error) {
	portFile := filepath.Join(dir, "port")
	port := 0
	if b, err := os.ReadFile(portFile); err == nil {
		if p, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && portFree(p) {
			port = p
		}
	}
	if port == 0 {
		p, err := freePort()
		if err != nil {
			return nil, err
		}
		port = p
	}
	if err := os.WriteFile(portFile, []byte(strconv.Itoa(port)), 0o644); err != nil {
		return nil, fmt.Errorf("pgtest: %w", err)
	}
	logPath := filepath.Join(dir, "postgres.log")
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("pgtest: %w", err)
	}
	defer logFile.Close()
	cmd := exec.Command(filepath.Join(bin, "postgres"), "-D", filepath.Join(dir, "data"),
		"-p", strconv.Itoa(port),
		"-c", "listen_addresses=127.0.0.1",
		"-c", "unix_socket_directories=",
		"-c", "fsync=on",
		"-c", "shared_buffers=16MB",
		"-c", "max_connections=400",
		"-c", "logging_collector=off")
	cmd.Stdout, cmd.Stderr = logFile, logFile
	// Pdeathsig stops the server when the thread that started it ends, so that thread is
	// kept for the server's lifetime (see run).
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred, Pdeathsig: syscall.SIGINT, Setpgid: true}
	s := &Server{dir: dir, port: port, exited: make(chan struct{})}
	started := make(chan error, 1)
	go s.run(cmd, started)
	if err := <-started; err != nil {
		return nil, fmt.Errorf("pgtest: start postgres: %w", err)
	}
	s.proc = cmd.Process
	deadline := time.Now().Add(60 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		conn, err := pgx.Connect(ctx, s.URL("postgres"))
		cancel()
		if err == nil {
			_ = conn.Close(context.Background())
			return s, nil
		}
		select {
		case <-s.exited:
			log, _ := os.ReadFile(logPath)
			return nil, fmt.Errorf("pgtest: postgres exited (%v); its log:\n%s", s.waitErr, tail(log, 2000))
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			_ = s.Stop()
			return nil, fmt.Errorf("pgtest: postgres did not answer on port %d within a minute: %w", port, err)
		}
	}
}

// run starts cmd on a thread of its own that lives until the server exits (the server's
// parent-death signal follows that thread), then waits for it.
func (s *Server) run(cmd *exec.Cmd, started chan<- error) {
	runtime.LockOSThread() // never unlocked: the thread ends with this goroutine
	if err := cmd.Start(); err != nil {
		started <- err
		return
	}
	started <- nil
	s.waitErr = cmd.Wait()
	close(s.exited)
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("pgtest: find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func portFree(port int) bool {
	l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		return false
	}
	l.Close()
	return true
}

func tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}

// Stop shuts the server down (a fast shutdown: open sessions are ended) and waits for it;
// its folder stays. It tolerates a nil or stopped server.
func (s *Server) Stop() error {
	if s == nil || s.proc == nil {
		return nil
	}
	select {
	case <-s.exited:
		return nil
	default:
	}
	_ = s.proc.Signal(syscall.SIGINT)
	select {
	case <-s.exited:
		return nil
	case <-time.After(60 * time.Second):
		_ = s.proc.Signal(syscall.SIGQUIT)
		<-s.exited
		return errors.New("pgtest: postgres did not stop within a minute (sent SIGQUIT)")
	}
}

// Kill stops the server abruptly (SIGKILL of the postmaster and its children, as a crash of
// the machine would), for tests of what a client sees when its database dies; Start on the
// same folder recovers it. It returns once every process of the server has ended: a backend
// still attached to the old shared memory would make Start's postmaster refuse to run.
func (s *Server) Kill() error {
	if s == nil || s.proc == nil {
		return nil
	}
	pgid := s.proc.Pid // Setpgid: the postmaster leads the group its children are in
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	<-s.exited
	deadline := time.Now().Add(30 * time.Second)
	for groupAlive(pgid) {
		if time.Now().After(deadline) {
			return errors.New("pgtest: the killed server's processes still run after 30 s")
		}
		time.Sleep(10 * time.Millisecond)
	}
	return nil
}

// groupAlive reports whether a process of group pgid still runs (a zombie, waiting for its
// parent to reap it, holds nothing and does not count).
func groupAlive(pgid int) bool {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return false
	}
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		raw, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid pgrp ...: comm may hold spaces, so split after its ')'.
		i := strings.LastIndexByte(string(raw), ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(raw[i+1:]))
		if len(f) >= 3 && f[0] != "Z" && f[2] == strconv.Itoa(pgid) {
			return true
		}
	}
	return false
}

// CreateDatabase creates an empty database name and returns its URL.
func (s *Server) CreateDatabase(ctx context.Context, name string) (string, error) {
	if err := createDatabase(ctx, s.URL("postgres"), name); err != nil {
		return "", err
	}
	return s.URL(name), nil
}

// DropDatabase drops database name, ending its sessions.
func (s *Server) DropDatabase(ctx context.Context, name string) error {
	return dropDatabase(ctx, s.URL("postgres"), name)
}

func createDatabase(ctx context.Context, adminURL, name string) error {
	return admin(ctx, adminURL, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize())
}

func dropDatabase(ctx context.Context, adminURL, name string) error {
	return admin(ctx, adminURL, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)")
}

func admin(ctx context.Context, adminURL, sql string) error {
	conn, err := pgx.Connect(ctx, adminURL)
	if err != nil {
		return fmt.Errorf("pgtest: connect to %s: %w", redact(adminURL), err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, sql); err != nil {
		return fmt.Errorf("pgtest: %s: %w", strings.Fields(sql)[0]+" "+strings.Fields(sql)[1], err)
	}
	return nil
}

// withDatabase returns u with its database replaced by name.
func withDatabase(u, name string) (string, error) {
	p, err := url.Parse(u)
	if err != nil {
		return "", fmt.Errorf("pgtest: parse the server URL: %w", err)
	}
	p.Path = "/" + name
	return p.String(), nil
}

// redact drops the password from a URL for messages.
func redact(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return "(unparsable URL)"
	}
	return p.Redacted()
}
