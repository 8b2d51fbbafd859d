package forms

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/gatehouse-dev/gatehouse/edge/store"
)

func TestCommitterGroupsAndDrains(t *testing.T) {
	t.Parallel()
	db, err := store.Open(store.Options{Dir: t.TempDir(), SyncWrites: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	c := newCommitter(db)
	var wg sync.WaitGroup
	errs := make(chan error, 200)
	for i := 0; i < 200; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			errs <- c.Commit(context.Background(), []byte(fmt.Sprintf("k/%03d", i)), []byte("v"))
		}(i)
	}
	wg.Wait()
	c.Close()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("Commit: %v", err)
		}
	}
	n := 0
	_ = db.View(context.Background(), func(tx *store.Txn) error {
		return tx.Iterate(store.IterOptions{Prefix: []byte("k/"), KeysOnly: true}, func(_, _ []byte) (bool, error) { n++; return true, nil })
	})
	if n != 200 {
		t.Errorf("%d keys committed, want 200", n)
	}
	if err := c.Commit(context.Background(), []byte("late"), []byte("v")); !errors.Is(err, ErrClosed) {
		t.Errorf("Commit after Close = %v, want ErrClosed", err)
	}
}

func TestCommitterTooBigSplits(t *testing.T) {
	t.Parallel()
	db, err := store.Open(store.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	c := newCommitter(db)
	defer c.Close()
	big := make([]byte, 900<<10)
	var wg sync.WaitGroup
	for i := 0; i < 40; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			if err := c.Commit(context.Background(), []byte(fmt.Sprintf("big/%02d", i)), big); err != nil {
				t.Errorf("Commit big %d: %v", i, err)
			}
		}(i)
	}
	wg.Wait()
}
