package store

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/edge/store/pgtest"
)

// TestPostgresFailover is the failure row "database failover" of docs/scale-out.md: a primary
// with a synchronous streaming standby, the store on a multi-host URL (both servers,
// target_session_attrs=read-write, so the pool connects to whichever takes writes), 8
// writers running; the primary is SIGKILLed and the standby promoted. Every write the store
// acknowledged, before the kill and after the promotion, is read back from the promoted
// standby; the Updates that failed are those in flight at the kill or begun before the
// promotion, and failed with the connection's error (no store sentinel: the edge answers
// them 500 INTERNAL); Ping (the node's /readyz) fails in the gap and succeeds after; no
// Update begun after the promotion fails.
func TestPostgresFailover(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	primary, standby, u := pgtest.StartFailoverPair(t, "failover")
	db, err := Open(Options{Backend: BackendPostgres, PostgresURL: u, SyncWrites: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Update(ctx, func(tx *Txn) error { return tx.Set([]byte("before"), []byte("v")) }); err != nil {
		t.Fatal(err)
	}

	load := startWriteLoad(db, 8)
	load.awaitAcks(t, 200)
	ackedBeforeKill := load.acks() // acked keeps them first: all are checked below
	killed := time.Now()
	if err := primary.Kill(); err != nil {
		t.Fatal(err)
	}
	killTook := time.Since(killed)

	// The gap: the primary is gone, the standby refuses writes (the pool does not take it).
	if err := db.Ping(ctx); err == nil {
		t.Error("Ping with the primary killed and the standby not promoted succeeded")
	}
	if err := db.View(ctx, func(tx *Txn) error { _, err := tx.Get([]byte("before")); return err }); err == nil {
		t.Error("View with the primary killed and the standby not promoted succeeded")
	}

	promoting := time.Now()
	if err := standby.Promote(ctx); err != nil {
		t.Fatal(err)
	}
	promoteTook := time.Since(promoting)
	atPromotion := load.restarted()
	promoted := time.Now()
	load.awaitAcks(t, atPromotion+1)
	firstAck := time.Since(promoted)
	gap := time.Since(killed)
	load.awaitAcks(t, atPromotion+200)
	acked, failed, failedAfter := load.stop()

	if failedAfter > 0 {
		t.Errorf("%d Updates begun after the promotion failed", failedAfter)
	}
	for _, err := range load.errs {
		var unavailable *groupUnavailable
		var unknown *commitUnknown
		if !errors.As(err, &unavailable) && !errors.As(err, &unknown) {
			t.Errorf("an Update in the failover failed with %v, want no connection or an unknown commit outcome", err)
		}
		for _, sentinel := range []error{ErrNotFound, ErrConflict, ErrTooBig, ErrClosed, ErrReadOnly, ErrUnsupported, ErrKeyTooLong} {
			if errors.Is(err, sentinel) {
				t.Errorf("an Update in the failover failed with %v, which is %v (the edge would not answer 500)", err, sentinel)
			}
		}
	}
	for i := 0; ; i++ {
		err := db.Ping(ctx)
		if err == nil {
			break
		}
		if i > DefaultPostgresConns {
			t.Fatalf("Ping after the promotion = %v", err)
		}
	}
	n := countPrefix(t, db, "load/")
	if n < len(acked) {
		t.Errorf("%d load keys on the promoted standby, fewer than the %d acknowledged", n, len(acked))
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
	t.Logf("failover under 8 writers: %d writes acknowledged (%d before the kill), %d load keys on the promoted standby; %d Updates failed (in flight at the kill or begun before the promotion)",
		len(acked), ackedBeforeKill, n, failed)
	t.Logf("write gap %v from the kill to the first acknowledgement after it: SIGKILL until every process ended %v, pg_promote %v, first acknowledgement %v after the promotion",
		gap.Round(time.Millisecond), killTook.Round(time.Millisecond), promoteTook.Round(time.Millisecond), firstAck.Round(time.Millisecond))
}
