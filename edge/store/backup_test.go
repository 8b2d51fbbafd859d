package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"
)

// A backup taken while Updates keep committing holds everything acknowledged before it and
// loads into an empty database of either backend: the stream format is the same.
func TestBackupLoad(t *testing.T) {
	t.Parallel()
	for _, from := range testBackends {
		for _, to := range testBackends {
			t.Run(from.name+"-to-"+to.name, func(t *testing.T) {
				t.Parallel()
				testBackupLoad(t, from, to)
			})
		}
	}
}

func testBackupLoad(t *testing.T, from, to testBackend) {
	ctx := context.Background()
	src := from.open(t, Options{})
	put := func(i int) error {
		return src.Update(ctx, func(tx *Txn) error { return tx.Set([]byte(fmt.Sprintf("k/%04d", i)), []byte(fmt.Sprint(i))) })
	}
	for i := 0; i < 500; i++ {
		if err := put(i); err != nil {
			t.Fatal(err)
		}
	}
	// A deleted key and an overwritten one: the backup has the last state only.
	if err := src.Update(ctx, func(tx *Txn) error {
		return errors.Join(tx.Delete([]byte("k/0007")), tx.Set([]byte("k/0008"), []byte("eight")), tx.Set([]byte("k/empty"), nil))
	}); err != nil {
		t.Fatal(err)
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
	err := src.Backup(&buf)
	close(stop)
	<-done
	if err != nil {
		t.Fatal(err)
	}
	dst := to.open(t, Options{})
	if err := dst.Load(&buf); err != nil {
		t.Fatal(err)
	}
	err = dst.View(ctx, func(tx *Txn) error {
		for i := 0; i < 500; i++ {
			k := fmt.Sprintf("k/%04d", i)
			v, err := tx.Get([]byte(k))
			want := fmt.Sprint(i)
			switch i {
			case 7:
				if err == nil {
					return fmt.Errorf("Get(%s) = %q after Load, want ErrNotFound (deleted)", k, v)
				}
				continue
			case 8:
				want = "eight"
			}
			if err != nil || string(v) != want {
				return fmt.Errorf("Get(%s) = %q, %v after Load, want %q", k, v, err, want)
			}
		}
		if ok, err := tx.Has([]byte("k/empty")); !ok || err != nil {
			return fmt.Errorf("Has(k/empty) = %v, %v after Load", ok, err)
		}
		// Every key of the backup is a key the source had when the backup ran: a prefix of
		// the writer's sequence, without holes.
		n := 0
		if err := tx.Iterate(IterOptions{Prefix: []byte("k/"), KeysOnly: true}, func(k, _ []byte) (bool, error) {
			if string(k) != "k/empty" {
				n++
			}
			return true, nil
		}); err != nil {
			return err
		}
		if last := fmt.Sprintf("k/%04d", n); n < 499 {
			return fmt.Errorf("%d keys loaded (up to %s), want at least 499", n, last)
		}
		if _, err := tx.Get([]byte(fmt.Sprintf("k/%04d", n))); err != nil {
			return fmt.Errorf("the backup has %d keys but not k/%04d: not a prefix of the writes", n, n)
		}
		return nil
	})
	if err != nil {
		t.Error(err)
	}
	// The loaded database takes new writes.
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
