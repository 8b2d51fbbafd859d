package store

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/gatehouse-dev/gatehouse/edge/store/pgtest"
)

// The tests of this file run on every backend: the store's contract is the same on each.

func TestMain(m *testing.M) { pgtest.Main(m) }

// testBackend makes stores of one backend for tests.
type testBackend struct {
	name string
	// fresh returns the options of a new, empty store.
	fresh func(t testing.TB) Options
}

var testBackends = []testBackend{
	{name: BackendBadger, fresh: func(t testing.TB) Options { return Options{Dir: t.TempDir()} }},
	{name: BackendPostgres, fresh: func(t testing.TB) Options {
		return Options{Backend: BackendPostgres, PostgresURL: pgtest.URL(t)}
	}},
}

// eachBackend runs fn as a parallel subtest per backend.
func eachBackend(t *testing.T, fn func(t *testing.T, b testBackend)) {
	t.Parallel()
	for _, b := range testBackends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			fn(t, b)
		})
	}
}

// open opens o, on a fresh store of the backend unless o names one already; the store is
// closed at t's cleanup.
func (b testBackend) open(t testing.TB, o Options) *DB {
	t.Helper()
	if o.Dir == "" && o.PostgresURL == "" {
		f := b.fresh(t)
		o.Backend, o.Dir, o.PostgresURL = f.Backend, f.Dir, f.PostgresURL
	}
	db, err := Open(o)
	if err != nil {
		t.Fatalf("Open(%s): %v", b.name, err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func TestConcurrentConflictingUpdatesAllSucceed(t *testing.T) {
	eachBackend(t, func(t *testing.T, b testBackend) {
		db := b.open(t, Options{SyncWrites: true})
		const writers = 500
		var wg sync.WaitGroup
		errs := make(chan error, writers)
		for i := 0; i < writers; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs <- db.Update(context.Background(), func(tx *Txn) error { return bump(tx, "hot") })
			}()
		}
		// Writes outside the committer (a Batch) touching the same key force real conflicts.
		for i := 0; i < 20; i++ {
			b := db.NewBatch()
			if err := b.Set([]byte("hot"), binary.BigEndian.AppendUint64(nil, 0)); err != nil {
				t.Fatal(err)
			}
			if err := b.Flush(); err != nil {
				t.Fatal(err)
			}
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Errorf("Update = %v, want nil (conflicts are retried inside)", err)
			}
		}
		commits, ops := db.CommitStats()
		if ops != writers {
			t.Errorf("CommitStats ops = %d, want %d", ops, writers)
		}
		t.Logf("%d updates in %d commits", ops, commits)
	})
}

func TestConcurrentCounterIsExact(t *testing.T) {
	eachBackend(t, func(t *testing.T, b testBackend) {
		db := b.open(t, Options{})
		var wg sync.WaitGroup
		for i := 0; i < 300; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := db.Update(context.Background(), func(tx *Txn) error { return bump(tx, "n") }); err != nil {
					t.Errorf("Update: %v", err)
				}
			}()
		}
		wg.Wait()
		if n := counter(t, db, "n"); n != 300 {
			t.Errorf("counter = %d after 300 increments", n)
		}
	})
}

func TestCloseDrainsQueuedUpdates(t *testing.T) {
	eachBackend(t, func(t *testing.T, b testBackend) {
		opts := b.fresh(t)
		opts.SyncWrites = true
		db := b.open(t, opts)
		const writers = 200
		var wg sync.WaitGroup
		acked := make(chan string, writers)
		started := make(chan struct{}, writers)
		for i := 0; i < writers; i++ {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				k := fmt.Sprintf("k/%03d", i)
				started <- struct{}{}
				err := db.Update(context.Background(), func(tx *Txn) error { return tx.Set([]byte(k), []byte("v")) })
				switch {
				case err == nil:
					acked <- k
				case !errors.Is(err, ErrClosed):
					t.Errorf("Update during Close = %v, want nil or ErrClosed", err)
				}
			}(i)
		}
		for i := 0; i < writers/2; i++ {
			<-started
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		wg.Wait()
		close(acked)
		if err := db.Update(context.Background(), func(tx *Txn) error { return nil }); !errors.Is(err, ErrClosed) {
			t.Errorf("Update after Close = %v, want ErrClosed", err)
		}
		db = b.open(t, opts)
		n := 0
		_ = db.View(context.Background(), func(tx *Txn) error {
			for k := range acked {
				n++
				if ok, err := tx.Has([]byte(k)); !ok || err != nil {
					t.Errorf("acknowledged %s missing after Close and reopen (%v)", k, err)
				}
			}
			return nil
		})
		t.Logf("%d of %d writers acknowledged before Close", n, writers)
	})
}

func TestFailedUpdateWritesNothing(t *testing.T) {
	eachBackend(t, func(t *testing.T, b testBackend) {
		db := b.open(t, Options{})
		ctx := context.Background()
		boom := errors.New("boom")
		var wg sync.WaitGroup
		for i := 0; i < 100; i++ {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				err := db.Update(ctx, func(tx *Txn) error {
					if err := tx.Set([]byte(fmt.Sprintf("w/%03d", i)), []byte("v")); err != nil {
						return err
					}
					if err := bump(tx, "n"); err != nil {
						return err
					}
					if i%2 == 1 {
						return boom
					}
					return nil
				})
				if want := map[bool]error{true: boom, false: nil}[i%2 == 1]; !errors.Is(err, want) {
					t.Errorf("Update %d = %v, want %v", i, err, want)
				}
			}(i)
		}
		wg.Wait()
		if n := counter(t, db, "n"); n != 50 {
			t.Errorf("counter = %d, want 50 (failed updates leave nothing)", n)
		}
		var keys []string
		_ = db.View(ctx, func(tx *Txn) error {
			return tx.Iterate(IterOptions{Prefix: []byte("w/"), KeysOnly: true}, func(k, _ []byte) (bool, error) {
				keys = append(keys, string(k))
				return true, nil
			})
		})
		for _, k := range keys {
			var i int
			fmt.Sscanf(k, "w/%d", &i)
			if i%2 == 1 {
				t.Errorf("key %s of a failed Update was written", k)
			}
		}
		if len(keys) != 50 {
			t.Errorf("%d keys written, want 50", len(keys))
		}
	})
}

func TestUpdateSeesItsOwnWrites(t *testing.T) {
	eachBackend(t, func(t *testing.T, b testBackend) {
		db := b.open(t, Options{})
		ctx := context.Background()
		if err := db.Update(ctx, func(tx *Txn) error {
			for _, k := range []string{"p/a", "p/c", "p/e", "q/x"} {
				if err := tx.Set([]byte(k), []byte("old")); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		tests := []struct {
			name string
			o    IterOptions
			want string
		}{
			{"forward", IterOptions{Prefix: []byte("p/")}, "p/a=new p/b=new p/d=new p/f=new"},
			{"reverse", IterOptions{Prefix: []byte("p/"), Reverse: true}, "p/f=new p/d=new p/b=new p/a=new"},
			{"from start", IterOptions{Prefix: []byte("p/"), Start: []byte("p/c")}, "p/d=new p/f=new"},
			{"reverse from start", IterOptions{Prefix: []byte("p/"), Start: []byte("p/c"), Reverse: true}, "p/b=new p/a=new"},
			{"keys only", IterOptions{Prefix: []byte("p/"), KeysOnly: true}, "p/a= p/b= p/d= p/f="},
		}
		err := db.Update(ctx, func(tx *Txn) error {
			// Staged: a replaced, b and d and f new, c and e deleted.
			for _, k := range []string{"p/a", "p/b", "p/d", "p/f", "p/e"} {
				if err := tx.Set([]byte(k), []byte("new")); err != nil {
					return err
				}
			}
			for _, k := range []string{"p/c", "p/e"} {
				if err := tx.Delete([]byte(k)); err != nil {
					return err
				}
			}
			if v, err := tx.Get([]byte("p/a")); err != nil || string(v) != "new" {
				t.Errorf("Get(p/a) = %q, %v; want the staged value", v, err)
			}
			if _, err := tx.Get([]byte("p/c")); !errors.Is(err, ErrNotFound) {
				t.Errorf("Get(p/c) after Delete = %v, want ErrNotFound", err)
			}
			if ok, _ := tx.Has([]byte("p/e")); ok {
				t.Errorf("Has(p/e) after Delete = true")
			}
			for _, tc := range tests {
				var got []string
				if err := tx.Iterate(tc.o, func(k, v []byte) (bool, error) {
					got = append(got, string(k)+"="+string(v))
					return true, nil
				}); err != nil {
					return err
				}
				if g := strings.Join(got, " "); g != tc.want {
					t.Errorf("%s: Iterate = %q, want %q", tc.name, g, tc.want)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	})
}

func TestUpdatePanicReachesCaller(t *testing.T) {
	eachBackend(t, func(t *testing.T, b testBackend) {
		db := b.open(t, Options{})
		func() {
			defer func() {
				if p := recover(); p == nil || !strings.Contains(fmt.Sprint(p), "kaboom") {
					t.Errorf("recover() = %v, want the panic of the update function", p)
				}
			}()
			_ = db.Update(context.Background(), func(tx *Txn) error { panic("kaboom") })
		}()
		// The committer survives.
		if err := db.Update(context.Background(), func(tx *Txn) error { return tx.Set([]byte("a"), []byte("1")) }); err != nil {
			t.Errorf("Update after a panic = %v", err)
		}
		if err := db.View(context.Background(), func(tx *Txn) error { return tx.Set([]byte("a"), nil) }); !errors.Is(err, ErrReadOnly) {
			t.Errorf("Set inside View = %v, want ErrReadOnly", err)
		}
	})
}

// TestCompactKeepsEveryKey: Compact, beside a running writer, loses no key and no value.
func TestCompactKeepsEveryKey(t *testing.T) {
	eachBackend(t, func(t *testing.T, b testBackend) {
		db := b.open(t, Options{})
		ctx := context.Background()
		put := func(from, to int) {
			t.Helper()
			if err := db.Update(ctx, func(tx *Txn) error {
				for i := from; i < to; i++ {
					if err := tx.Set([]byte(fmt.Sprintf("c/%05d", i)), []byte(fmt.Sprint(i))); err != nil {
						return err
					}
				}
				return nil
			}); err != nil {
				t.Fatal(err)
			}
		}
		put(0, 2000)
		done := make(chan struct{})
		go func() { defer close(done); put(2000, 3000) }()
		if err := db.Compact(); err != nil {
			t.Fatal(err)
		}
		<-done
		n := 0
		if err := db.View(ctx, func(tx *Txn) error {
			return tx.Iterate(IterOptions{Prefix: []byte("c/")}, func(k, v []byte) (bool, error) {
				if want := fmt.Sprintf("c/%05d", n); string(k) != want || string(v) != fmt.Sprint(n) {
					return false, fmt.Errorf("key %d: %s=%s", n, k, v)
				}
				n++
				return true, nil
			})
		}); err != nil {
			t.Fatal(err)
		}
		if n != 3000 {
			t.Fatalf("%d keys after Compact, want 3000", n)
		}
	})
}
