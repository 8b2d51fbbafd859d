package store

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/edge/store/pgtest"
)

// Nodes sharing one database (each its own DB, as gateway processes are) conflict with each
// other; their committers run the groups again, and no increment is lost.
func TestPostgresNodesShareOneDatabase(t *testing.T) {
	t.Parallel()
	u := pgtest.URL(t)
	ctx := context.Background()
	var nodes []*DB
	for i := 0; i < 3; i++ {
		db, err := Open(Options{Backend: BackendPostgres, PostgresURL: u, SyncWrites: true})
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		nodes = append(nodes, db)
	}
	const perNode, writers = 60, 6
	var wg sync.WaitGroup
	for i, db := range nodes {
		for w := 0; w < writers; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for j := 0; j < perNode/writers; j++ {
					err := db.Update(ctx, func(tx *Txn) error {
						if err := bump(tx, "shared"); err != nil {
							return err
						}
						return tx.Set([]byte(fmt.Sprintf("log/%d/%d/%d", i, w, j)), nil)
					})
					if err != nil {
						t.Errorf("node %d Update: %v", i, err)
						return
					}
				}
			}()
		}
	}
	wg.Wait()
	if n := counter(t, nodes[2], "shared"); n != 3*perNode {
		t.Errorf("counter = %d after %d increments on three nodes", n, 3*perNode)
	}
	var retries uint64
	for _, db := range nodes {
		retries += db.e.(*pgEngine).retries.Load()
	}
	t.Logf("%d group retries after serialization failures", retries)
}

// The schema is created once and found again; a database of a newer schema is refused.
func TestPostgresSchemaVersion(t *testing.T) {
	t.Parallel()
	u := pgtest.URL(t)
	ctx := context.Background()
	for i := 0; i < 2; i++ { // the second Open finds the tables
		db, err := Open(Options{Backend: BackendPostgres, PostgresURL: u})
		if err != nil {
			t.Fatalf("Open #%d: %v", i+1, err)
		}
		db.Close()
	}
	db, err := Open(Options{Backend: BackendPostgres, PostgresURL: u})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.e.(*pgEngine).pool.Exec(ctx, `UPDATE gatehouse_meta SET value = '99' WHERE name = 'schema_version'`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if db, err := Open(Options{Backend: BackendPostgres, PostgresURL: u}); err == nil {
		db.Close()
		t.Errorf("Open of a database of schema version 99 = nil error, want a refusal")
	}
}

func countPrefix(t *testing.T, db *DB, prefix string) int {
	t.Helper()
	n := 0
	if err := db.View(context.Background(), func(tx *Txn) error {
		return tx.Iterate(IterOptions{Prefix: []byte(prefix), KeysOnly: true}, func(_, _ []byte) (bool, error) { n++; return true, nil })
	}); err != nil {
		t.Fatal(err)
	}
	return n
}

// A database server that crashes (SIGKILL) under a write load and comes back (same folder, same
// port) is used again without a failed call: connections lost before a transaction began are
// replaced, and a group whose connection died before its commit runs again. Every write the
// store acknowledged, before the crash, across it and after it, is read back; the writes that
// failed are those in flight while the server was down (the failure row "database restart" of
// docs/scale-out.md).
func TestPostgresServerRestart(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	srv, err := pgtest.Start(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { srv.Stop() }()
	u, err := srv.CreateDatabase(ctx, "restart")
	if err != nil {
		t.Fatal(err)
	}
	db, err := Open(Options{Backend: BackendPostgres, PostgresURL: u, SyncWrites: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	set := func(k string) error {
		return db.Update(ctx, func(tx *Txn) error { return tx.Set([]byte(k), []byte("v")) })
	}
	// Several connections in the pool, all of which the crash breaks.
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = db.View(ctx, func(tx *Txn) error { _, err := tx.Has([]byte("x")); return err })
		}()
	}
	wg.Wait()
	if err := set("before"); err != nil {
		t.Fatal(err)
	}
	load := startWriteLoad(db, 8)
	load.awaitAcks(t, 200)
	if err := srv.Kill(); err != nil {
		t.Fatal(err)
	}
	if srv, err = pgtest.Start(dir); err != nil {
		t.Fatal(err)
	}
	atRestart := load.restarted()
	load.awaitAcks(t, atRestart+200)
	acked, failed, failedAfter := load.stop()
	if failedAfter > 0 {
		t.Errorf("%d Updates begun after the server was back failed", failedAfter)
	}
	if n := countPrefix(t, db, "load/"); n < len(acked) {
		t.Errorf("%d load keys in the database, fewer than the %d acknowledged", n, len(acked))
	}
	if err := db.View(ctx, func(tx *Txn) error {
		for _, k := range acked {
			if _, err := tx.Get([]byte(k)); err != nil {
				return fmt.Errorf("acknowledged write %s: %w", k, err)
			}
		}
		return nil
	}); err != nil {
		t.Error(err)
	}
	t.Logf("write load across the crash: %d acknowledged (%d before the restart), every one read back; %d failed (in flight at the crash or begun while the server was down)", len(acked), atRestart, failed)
	for i := 0; i < 4; i++ {
		if err := set(fmt.Sprintf("after/%d", i)); err != nil {
			t.Errorf("Update %d after the server's restart = %v", i, err)
		}
		if err := db.View(ctx, func(tx *Txn) error {
			_, err := tx.Get([]byte("before"))
			return err
		}); err != nil {
			t.Errorf("View %d after the server's restart = %v", i, err)
		}
	}
}

// TestPingFollowsTheServer: Ping (a node's readiness check) fails while the database server is
// down and succeeds again once it is back, after the pool has dropped the connections the
// shutdown closed (one failed Ping each at most).
func TestPingFollowsTheServer(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	srv, err := pgtest.Start(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { srv.Stop() }()
	u, err := srv.CreateDatabase(ctx, "ping")
	if err != nil {
		t.Fatal(err)
	}
	db, err := Open(Options{Backend: BackendPostgres, PostgresURL: u})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Ping(ctx); err != nil {
		t.Fatalf("Ping with the server up = %v", err)
	}
	srv.Stop() // a clean shutdown: the server has closed every connection when Stop returns
	for i := 0; i <= DefaultPostgresConns; i++ {
		if err := db.Ping(ctx); err == nil {
			t.Fatal("Ping with the server down succeeded")
		}
	}
	if srv, err = pgtest.Start(dir); err != nil {
		t.Fatal(err)
	}
	for i := 0; ; i++ {
		err := db.Ping(ctx)
		if err == nil {
			break
		}
		if i > DefaultPostgresConns {
			t.Fatalf("Ping after the server's restart = %v", err)
		}
	}
}

// writeLoad is writers goroutines each setting new keys load/<writer>/<n> one Update at a
// time, keeping the keys whose Update returned nil (acknowledged); a writer whose Update
// failed waits 5 ms before the next, as a client retrying would.
type writeLoad struct {
	mu     sync.Mutex
	acked  []string
	failed int
	errs   []error // the failed Updates' errors
	// back is set once the server is back; failedAfter counts the failed Updates begun then.
	back        bool
	failedAfter int
	more        chan struct{} // signalled after each Update, acknowledged or failed
	done        chan struct{}
	wg          sync.WaitGroup
}

func startWriteLoad(db *DB, writers int) *writeLoad {
	l := &writeLoad{more: make(chan struct{}, 1), done: make(chan struct{})}
	for w := 0; w < writers; w++ {
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			for i := 0; ; i++ {
				select {
				case <-l.done:
					return
				default:
				}
				k := fmt.Sprintf("load/%d/%06d", w, i)
				l.mu.Lock()
				back := l.back
				l.mu.Unlock()
				err := db.Update(context.Background(), func(tx *Txn) error { return tx.Set([]byte(k), []byte(k)) })
				l.mu.Lock()
				if err == nil {
					l.acked = append(l.acked, k)
				} else {
					l.failed++
					l.errs = append(l.errs, err)
					if back {
						l.failedAfter++
					}
				}
				l.mu.Unlock()
				if err != nil {
					time.Sleep(5 * time.Millisecond)
				}
				select {
				case l.more <- struct{}{}:
				default:
				}
			}
		}()
	}
	return l
}

// restarted notes that the server is back and returns the acknowledgements so far.
func (l *writeLoad) restarted() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.back = true
	return len(l.acked)
}

func (l *writeLoad) acks() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.acked)
}

// awaitAcks waits until n writes were acknowledged.
func (l *writeLoad) awaitAcks(t *testing.T, n int) {
	t.Helper()
	deadline := time.After(60 * time.Second)
	for l.acks() < n {
		select {
		case <-l.more:
		case <-deadline:
			t.Fatalf("%d writes acknowledged, want %d", l.acks(), n)
		}
	}
}

// stop ends the load and returns the acknowledged keys, how many Updates failed, and how many
// of those began after the server was back.
func (l *writeLoad) stop() ([]string, int, int) {
	close(l.done)
	l.wg.Wait()
	return l.acked, l.failed, l.failedAfter
}
