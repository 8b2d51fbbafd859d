package pgtest

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// StartStandby starts a streaming standby of s in dir (a folder of its own, like Start's): a
// copy of s's cluster taken with pg_basebackup -R, replaying s's log as it streams in, on a
// port of its own, taking read-only connections. With synchronous, s is told to wait for it
// (synchronous_standby_names on s, set after the copy so a promoted standby does not wait
// for a standby of its own): a commit s acknowledges is then flushed on the standby too, so
// promoting it loses no acknowledged write. StartStandby returns once the standby streams
// (and, with synchronous, once s counts it as its synchronous standby).
func (s *Server) StartStandby(dir string, synchronous bool) (*Server, error) {
	// -R writes standby.signal and primary_conninfo; --checkpoint=fast does not wait for the
	// primary's next checkpoint; -X stream copies the log written meanwhile.
	standby, err := startIn(dir, "pg_basebackup", func(bin, data string) *exec.Cmd {
		return exec.Command(filepath.Join(bin, "pg_basebackup"), "-h", "127.0.0.1", "-p", strconv.Itoa(s.port),
			"-U", "postgres", "-D", data, "-R", "-X", "stream", "--checkpoint=fast", "--no-sync")
	})
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := pgx.Connect(ctx, s.URL("postgres"))
	if err != nil {
		_ = standby.Stop()
		return nil, fmt.Errorf("pgtest: connect to the primary: %w", err)
	}
	defer conn.Close(context.Background())
	if synchronous {
		if _, err := conn.Exec(ctx, `ALTER SYSTEM SET synchronous_standby_names = '*'`); err == nil {
			_, err = conn.Exec(ctx, `SELECT pg_reload_conf()`)
		}
		if err != nil {
			_ = standby.Stop()
			return nil, fmt.Errorf("pgtest: make the standby synchronous: %w", err)
		}
	}
	// Wait for the primary's walsender to report the standby streaming (and synchronous).
	want := "async"
	if synchronous {
		want = "sync"
	}
	for {
		var n int
		err := conn.QueryRow(ctx, `SELECT count(*) FROM pg_stat_replication WHERE state = 'streaming' AND sync_state = $1`, want).Scan(&n)
		if err == nil && n > 0 {
			return standby, nil
		}
		if err == nil {
			err = errors.New("no standby streaming")
		}
		select {
		case <-ctx.Done():
			_ = standby.Stop()
			return nil, fmt.Errorf("pgtest: the standby on port %d does not stream (%s) within a minute: %w", standby.port, want, err)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// Promote makes a standby a primary (pg_promote, as a failover does) and returns once it
// takes writes.
func (s *Server) Promote(ctx context.Context) error {
	conn, err := pgx.Connect(ctx, s.URL("postgres"))
	if err != nil {
		return fmt.Errorf("pgtest: connect to the standby: %w", err)
	}
	defer conn.Close(context.Background())
	var done bool
	// pg_promote waits (up to its 60 s) until the promotion is complete.
	if err := conn.QueryRow(ctx, `SELECT pg_promote(true, 60)`).Scan(&done); err != nil {
		return fmt.Errorf("pgtest: promote: %w", err)
	}
	if !done {
		return errors.New("pgtest: the standby did not finish its promotion within 60 s")
	}
	return nil
}

// StartFailoverPair starts a primary holding database db and a synchronous standby of it,
// each in a folder of t's, both stopped at t's cleanup, and returns them with the URL naming
// both (FailoverURL), for a test of a failover.
func StartFailoverPair(t testing.TB, db string) (primary, standby *Server, url string) {
	t.Helper()
	primary, err := Start(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = primary.Stop() })
	if _, err := primary.CreateDatabase(context.Background(), db); err != nil {
		t.Fatal(err)
	}
	standby, err = primary.StartStandby(t.TempDir(), true)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = standby.Stop() })
	return primary, standby, primary.FailoverURL(standby, db)
}
