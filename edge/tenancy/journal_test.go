package tenancy_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/gatehouse-dev/gatehouse/edge/apikey"
	"github.com/gatehouse-dev/gatehouse/edge/edgetest/storetest"
	"github.com/gatehouse-dev/gatehouse/edge/journal"
	"github.com/gatehouse-dev/gatehouse/edge/store"
	"github.com/gatehouse-dev/gatehouse/edge/tenancy"
)

// Apply, CreateKey and RevokeKey journal their changes in their own transaction (the journal's
// write commits with them, or not at all) and hand Notify's listeners the changes marked with
// the generation the journal gave; an apply that changes nothing journals nothing.
func TestChangesAreJournaledInTheirTransaction(t *testing.T) {
	ctx := context.Background()
	db, err := storetest.Open(t, store.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	s, err := tenancy.NewService(tenancy.Options{DB: db})
	if err != nil {
		t.Fatal(err)
	}
	gen := uint64(0)
	fail := false
	s.SetJournal(func(txn *store.Txn, cs []journal.Change) (uint64, error) {
		if fail {
			return 0, errors.New("journal refused")
		}
		gen++ // the test's writes are sequential: no rerun of a function
		return gen, txn.Set([]byte(fmt.Sprintf("journal/%d", gen)), []byte(cs[0].Kind))
	})
	var heard []journal.Change
	s.OnChange(func(_ context.Context, cs []journal.Change) { heard = append(heard, cs...) })
	journaled := func(g uint64) bool {
		ok := false
		_ = db.View(ctx, func(txn *store.Txn) error {
			ok, err = txn.Has([]byte(fmt.Sprintf("journal/%d", g)))
			return err
		})
		return ok
	}

	apply(t, s, []byte(coreDoc))
	if !journaled(1) || len(heard) == 0 || heard[0].Gen != 1 {
		t.Fatalf("after Apply: journaled %v, heard %+v; want generation 1 on every change", journaled(1), heard)
	}
	heard = nil
	apply(t, s, []byte(coreDoc)) // no change
	if gen != 1 || len(heard) != 0 {
		t.Fatalf("an apply without change journaled (generation %d) or notified %+v", gen, heard)
	}
	if _, err := s.CreateKey(ctx, tenancy.KeyRequest{Org: "acme", Project: "demo", Name: "k2", Kind: "secret", Products: []string{"email"}}); err != nil {
		t.Fatal(err)
	}
	if err := s.RevokeKey(ctx, "acme", "demo", "k2"); err != nil {
		t.Fatal(err)
	}
	if !journaled(2) || !journaled(3) || len(heard) != 2 || heard[0].Gen != 2 || heard[1].Gen != 3 {
		t.Fatalf("CreateKey and RevokeKey: heard %+v, want generations 2 and 3", heard)
	}
	// A journal that fails fails the change: nothing of it is written, nobody hears of it.
	fail, heard = true, nil
	if err := s.RevokeKey(ctx, "acme", "demo", "web"); err == nil {
		t.Fatal("RevokeKey with a failing journal = nil")
	}
	if len(heard) != 0 {
		t.Fatalf("a failed change was announced: %+v", heard)
	}
	if k, err := s.KeyByHash(ctx, apikey.Hash("pk_live_demo_web")); err != nil || k.Revoked {
		t.Fatalf("after a revocation whose journal failed, the key = %+v, %v; want it active", k, err)
	}
}
