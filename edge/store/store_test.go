package store

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"testing"
)

func TestUpdateViewIterate(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, err := Open(Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	err = db.Update(ctx, func(tx *Txn) error {
		for i := 0; i < 5; i++ {
			if err := tx.Set(Key("t", "p", fmt.Sprintf("k%d", i)), []byte{byte(i)}); err != nil {
				return err
			}
		}
		return tx.Set(Key("t", "q", "other"), []byte("x"))
	})
	if err != nil {
		t.Fatal(err)
	}
	var fwd, rev []string
	err = db.View(ctx, func(tx *Txn) error {
		if _, err := tx.Get(Key("t", "p", "missing")); !errors.Is(err, ErrNotFound) {
			t.Errorf("Get(missing) = %v, want ErrNotFound", err)
		}
		if err := tx.Iterate(IterOptions{Prefix: Prefix("t", "p")}, func(k, _ []byte) (bool, error) {
			fwd = append(fwd, LastPart(k))
			return true, nil
		}); err != nil {
			return err
		}
		return tx.Iterate(IterOptions{Prefix: Prefix("t", "p"), Reverse: true, KeysOnly: true}, func(k, _ []byte) (bool, error) {
			rev = append(rev, LastPart(k))
			return len(rev) < 3, nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(fwd) != "[k0 k1 k2 k3 k4]" || fmt.Sprint(rev) != "[k4 k3 k2]" {
		t.Errorf("forward %v, reverse %v", fwd, rev)
	}
}

func TestNewIDIsTimeOrdered(t *testing.T) {
	t.Parallel()
	ids := make([]string, 1000)
	for i := range ids {
		ids[i] = NewID()
	}
	if !sort.StringsAreSorted(ids) {
		t.Errorf("NewID values are not increasing")
	}
	if len(ids[0]) != 26 {
		t.Errorf("NewID length %d", len(ids[0]))
	}
}

func TestSyncWritesSurviveReopen(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ctx := context.Background()
	db, err := Open(Options{Dir: dir, SyncWrites: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Update(ctx, func(tx *Txn) error { return tx.Set([]byte("a"), []byte("1")) }); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db, err = Open(Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	_ = db.View(ctx, func(tx *Txn) error {
		if v, err := tx.Get([]byte("a")); err != nil || string(v) != "1" {
			t.Errorf("after reopen Get = %q, %v", v, err)
		}
		return nil
	})
}

func TestOpenUnknownBackend(t *testing.T) {
	t.Parallel()
	if db, err := Open(Options{Backend: "sqlite"}); err == nil {
		db.Close()
		t.Errorf("Open(Backend: sqlite) = nil error, want an unknown-backend error")
	}
}
