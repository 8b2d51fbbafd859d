package store

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/edge/store/pgtest"
)

// TestPostgresPartition is the failure row "the database unreachable without a word" of
// docs/scale-out.md: a TCP proxy between the store and PostgreSQL stops forwarding under a
// load of 8 writers, closing nothing (no FIN, no RST: the bytes are held), as a partition or a
// lost machine does. Every Update and View begun then fails with an error, after the
// statement timeout rather than TCP's (many minutes), the group in flight at the cut
// included; Ping (a node's /readyz) fails; once the proxy forwards again, writes resume with
// no failed call, and every write the store acknowledged, before the cut and after it, is read
// back.
func TestPostgresPartition(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	direct := pgtest.URL(t)
	target, err := url.Parse(direct)
	if err != nil {
		t.Fatal(err)
	}
	p := pgtest.StartProxy(t, target.Host)
	u, err := p.URL(direct)
	if err != nil {
		t.Fatal(err)
	}
	const timeout = time.Second
	db, err := Open(Options{Backend: BackendPostgres, PostgresURL: u, SyncWrites: true, PostgresTimeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Update(ctx, func(tx *Txn) error { return tx.Set([]byte("before"), []byte("v")) }); err != nil {
		t.Fatal(err)
	}
	load := startWriteLoad(db, 8)
	load.awaitAcks(t, 200)

	p.Partition()
	// A bound that only a hang passes: a call waits for the group in flight at the cut (its
	// wait for a connection and its statement, one timeout each), then for its own.
	const bound = 8 * timeout
	calls := []struct {
		name string
		call func() error
	}{
		{"Update", func() error {
			return db.Update(ctx, func(tx *Txn) error { return tx.Set([]byte("cut"), []byte("v")) })
		}},
		{"Update that reads", func() error {
			return db.Update(ctx, func(tx *Txn) error { _, err := tx.Get([]byte("before")); return err })
		}},
		{"View", func() error {
			return db.View(ctx, func(tx *Txn) error { _, err := tx.Get([]byte("before")); return err })
		}},
		{"Ping (/readyz)", func() error {
			pctx, cancel := context.WithTimeout(ctx, 2*time.Second) // as serve's readiness check
			defer cancel()
			return db.Ping(pctx)
		}},
	}
	var wg sync.WaitGroup
	took := make([]time.Duration, len(calls))
	errs := make([]error, len(calls))
	for i, c := range calls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			start := time.Now()
			errs[i] = c.call()
			took[i] = time.Since(start)
		}()
	}
	wg.Wait()
	for i, c := range calls {
		switch {
		case errs[i] == nil:
			t.Errorf("%s across the partition succeeded", c.name)
		case took[i] > bound:
			t.Errorf("%s across the partition failed after %v, want at most %v (it waited on TCP, not the timeout): %v", c.name, took[i], bound, errs[i])
		case errors.Is(errs[i], ErrNotFound) || errors.Is(errs[i], ErrConflict) || errors.Is(errs[i], ErrClosed):
			t.Errorf("%s across the partition failed with %v, a store sentinel (the edge would not answer 500)", c.name, errs[i])
		}
		t.Logf("%s across the partition: %v after %v", c.name, errs[i], took[i].Round(time.Millisecond))
	}
	// What the load's writers saw while cut off: errors, not acknowledgements.
	cut := load.acks()
	load.awaitFailures(t, 16)
	if n := load.acks(); n != cut {
		t.Errorf("%d writes acknowledged while the proxy forwarded nothing", n-cut)
	}

	p.Heal()
	atHeal := load.restarted()
	load.awaitAcks(t, atHeal+200)
	acked, failed, failedAfter := load.stop()
	if failedAfter > 0 {
		t.Errorf("%d Updates begun after the proxy forwarded again failed", failedAfter)
	}
	if err := db.Ping(ctx); err != nil {
		t.Errorf("Ping after the partition = %v", err)
	}
	if err := db.View(ctx, func(tx *Txn) error {
		for _, k := range append(acked, "before") {
			if _, err := tx.Get([]byte(k)); err != nil {
				return fmt.Errorf("acknowledged write %s: %w", k, err)
			}
		}
		return nil
	}); err != nil {
		t.Error(err)
	}
	t.Logf("write load across the partition: %d acknowledged (%d before the cut), every one read back; %d failed (in flight at the cut or begun during it)", len(acked), cut, failed)
}

// awaitFailures waits until n Updates failed.
func (l *writeLoad) awaitFailures(t *testing.T, n int) {
	t.Helper()
	deadline := time.After(60 * time.Second)
	for {
		l.mu.Lock()
		failed := l.failed
		l.mu.Unlock()
		if failed >= n {
			return
		}
		select {
		case <-l.more: // signalled after each Update, failed or not
		case <-deadline:
			t.Fatalf("%d Updates failed, want %d", failed, n)
		}
	}
}
