package store

import (
	"bytes"
	"context"
	"fmt"
	"testing"
)

// A backup taken while Updates keep committing holds everything acknowledged before it and
// loads into an empty database.
func TestBackupLoad(t *testing.T) {
	ctx := context.Background()
	src, err := Open(Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	put := func(i int) error {
		return src.Update(ctx, func(tx *Txn) error { return tx.Set([]byte(fmt.Sprintf("k/%04d", i)), []byte(fmt.Sprint(i))) })
	}
	for i := 0; i < 500; i++ {
		if err := put(i); err != nil {
			t.Fatal(err)
		}
	}
	stop, done := make(chan struct{}), make(chan struct{})
	go func() { // a writer during the backup
		defer close(done)
		for i := 500; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			if err := put(i); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	var buf bytes.Buffer
	err = src.Backup(&buf)
	close(stop)
	<-done
	if err != nil {
		t.Fatal(err)
	}
	dst, err := Open(Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Close()
	if err := dst.Load(&buf); err != nil {
		t.Fatal(err)
	}
	err = dst.View(ctx, func(tx *Txn) error {
		for i := 0; i < 500; i++ {
			v, err := tx.Get([]byte(fmt.Sprintf("k/%04d", i)))
			if err != nil || string(v) != fmt.Sprint(i) {
				return fmt.Errorf("Get(k/%04d) = %q, %v after Load", i, v, err)
			}
		}
		return nil
	})
	if err != nil {
		t.Error(err)
	}
	// The loaded database takes new writes (its version counter is past the loaded keys').
	if err := dst.Update(ctx, func(tx *Txn) error { return tx.Set([]byte("k/0499"), []byte("new")) }); err != nil {
		t.Fatal(err)
	}
	_ = dst.View(ctx, func(tx *Txn) error {
		if v, _ := tx.Get([]byte("k/0499")); string(v) != "new" {
			t.Errorf("Get(k/0499) after an Update on the loaded db = %q, want new", v)
		}
		return nil
	})
}
