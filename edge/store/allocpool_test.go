package store

import (
	"context"
	"fmt"
	"testing"
)

// Badger's builder pool is taken out of use at open (drainBuilders): the fields it reads are
// still there in the badger version go.mod names, and a store whose memtables flush and
// compact many times with no pool keeps every write across a reopen.
func TestBuildersUnpooled(t *testing.T) {
	dir := t.TempDir()
	e, err := openBadger(Options{Dir: dir, MemTableMB: 1})
	if err != nil {
		t.Fatal(err)
	}
	if poolChannel(e.bdb) == nil {
		t.Fatal("badger.DB has no allocPool field of type *z.AllocatorPool with an allocCh channel: drainBuilders did nothing (badger or ristretto upgraded?)")
	}
	if err := e.close(); err != nil {
		t.Fatal(err)
	}

	db, err := Open(Options{Dir: dir, MemTableMB: 1})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	val := make([]byte, 1000)
	const n = 20000 // about 20 MB: twenty flushes of 1 MB memtables, and their compactions
	for i := 0; i < n; i += 100 {
		if err := db.Update(ctx, func(txn *Txn) error {
			for j := i; j < i+100; j++ {
				if err := txn.Set(fmt.Appendf(nil, "k/%06d", j), val); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db, err = Open(Options{Dir: dir, MemTableMB: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	seen := 0
	if err := db.View(ctx, func(txn *Txn) error {
		return txn.Iterate(IterOptions{Prefix: []byte("k/")}, func(_, v []byte) (bool, error) {
			if len(v) != len(val) {
				return false, fmt.Errorf("value of %d bytes", len(v))
			}
			seen++
			return true, nil
		})
	}); err != nil {
		t.Fatal(err)
	}
	if seen != n {
		t.Fatalf("%d keys after reopening, want %d", seen, n)
	}
}
