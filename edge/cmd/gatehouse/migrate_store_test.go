package main

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/gatehouse-dev/gatehouse/edge/store"
)

// copyStore copies every key and value, counts them by product, and refuses a target that
// holds anything without writing to it.
func TestCopyStore(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	open := func() *store.DB {
		db, err := store.Open(store.Options{Dir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = db.Close() })
		return db
	}
	src, dst := open(), open()
	want := map[string]string{}
	for i := 0; i < 2500; i++ { // more than one batch of the target
		for _, p := range []string{"records", "forms", "tenancy"} {
			if i%3 == 0 || p == "records" {
				want[fmt.Sprintf("%s/p/%05d", p, i)] = fmt.Sprintf("value %d of %s", i, p)
			}
		}
	}
	want["solo"] = "a key without a separator"
	b := src.NewBatch()
	for k, v := range want {
		if err := b.Set([]byte(k), []byte(v)); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Flush(); err != nil {
		t.Fatal(err)
	}
	n, err := copyStore(ctx, src, dst)
	if err != nil {
		t.Fatalf("copyStore: %v", err)
	}
	if n["records"] != 2500 || n["forms"] != 834 || n["tenancy"] != 834 || n["solo"] != 1 || n.total() != len(want) {
		t.Errorf("copyStore counts = %v (total %d), want %d keys", n, n.total(), len(want))
	}
	got := map[string]string{}
	_ = dst.View(ctx, func(tx *store.Txn) error {
		return tx.Iterate(store.IterOptions{}, func(k, v []byte) (bool, error) {
			got[string(k)] = string(v)
			return true, nil
		})
	})
	if len(got) != len(want) {
		t.Errorf("target holds %d keys, want %d", len(got), len(want))
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("target %s = %q, want %q", k, got[k], v)
			break
		}
	}
	// A second copy into the now full target is refused.
	if _, err := copyStore(ctx, src, dst); !errors.Is(err, errTargetNotEmpty) {
		t.Errorf("copyStore into a full target = %v, want errTargetNotEmpty", err)
	}
}
