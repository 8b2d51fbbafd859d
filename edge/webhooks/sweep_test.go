package webhooks

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/edge/edgetest/storetest"
	"github.com/gatehouse-dev/gatehouse/edge/egress"
	"github.com/gatehouse-dev/gatehouse/edge/store"
)

// countKeys counts the keys below webhooks/<kind>/.
func countKeys(t *testing.T, db *store.DB, kind string) int {
	t.Helper()
	n := 0
	err := db.View(context.Background(), func(txn *store.Txn) error {
		return txn.Iterate(store.IterOptions{Prefix: store.Prefix(root, kind), KeysOnly: true}, func(_, _ []byte) (bool, error) {
			n++
			return true, nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestSweepKeepsPendingAndRecent(t *testing.T) {
	db, err := storetest.Open(t, store.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	s, err := NewService(Options{DB: db, Egress: egress.New(egress.Options{})})
	if err != nil {
		t.Fatal(err)
	}
	// Two deliveries: one ends (an attempt refused by the egress policy past its 24 h, so
	// failed), one stays pending.
	ctx := context.Background()
	write := func(d Delivery) {
		if err := db.Update(ctx, func(txn *store.Txn) error { return Batch{s: s, ds: []Delivery{d}}.Write(txn) }); err != nil {
			t.Fatal(err)
		}
	}
	write(Delivery{Project: "p", Webhook: "h", Type: "form.submitted", Status: StatusPending, Body: []byte(`{}`)})
	write(Delivery{Project: "p", Webhook: "h", Type: "form.submitted", Status: StatusPending, Body: []byte(`{}`)})
	var ended Delivery
	_ = db.View(ctx, func(txn *store.Txn) error {
		return txn.Iterate(store.IterOptions{Prefix: store.Prefix(root, "d")}, func(_, v []byte) (bool, error) {
			return false, json.Unmarshal(v, &ended)
		})
	})
	ended.CreatedAt = ended.CreatedAt.Add(-MaxAge) // its 24 hours are over: the next failure ends it
	if err := db.Update(ctx, func(txn *store.Txn) error { return s.put(txn, &ended, ended.Due) }); err != nil {
		t.Fatal(err)
	}
	s.record(ended, "", result{status: 500}, false, time.Millisecond)
	if a, d := countKeys(t, db, "a"), countKeys(t, db, "d"); a != 1 || d != 2 {
		t.Fatalf("before the sweep: %d attempts, %d deliveries; want 1 and 2", a, d)
	}
	if n, err := s.sweep(ctx, time.Now().Add(-time.Hour)); err != nil || n != 0 {
		t.Fatalf("sweep of nothing old = %d, %v", n, err)
	}
	n, err := s.sweep(ctx, time.Now().Add(time.Hour)) // everything is older than the cutoff
	if err != nil || n != 2 {
		t.Fatalf("sweep = %d, %v; want the attempt and the failed delivery", n, err)
	}
	if a, d, q := countKeys(t, db, "a"), countKeys(t, db, "d"), countKeys(t, db, "q"); a != 0 || d != 1 || q != 1 {
		t.Errorf("after the sweep: %d attempts, %d deliveries, %d queued; want 0, 1 (the pending one), 1", a, d, q)
	}
}
