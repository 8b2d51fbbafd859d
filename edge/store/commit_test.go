package store

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// counter reads the 8-byte counter at k (0 when missing).
func counter(t *testing.T, db *DB, k string) uint64 {
	t.Helper()
	var n uint64
	err := db.View(context.Background(), func(tx *Txn) error {
		v, err := tx.Get([]byte(k))
		if errors.Is(err, ErrNotFound) {
			return nil
		}
		if err == nil {
			n = binary.BigEndian.Uint64(v)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// bump adds one to the counter at k: every caller reads and writes the same key.
func bump(tx *Txn, k string) error {
	var n uint64
	v, err := tx.Get([]byte(k))
	switch {
	case errors.Is(err, ErrNotFound):
	case err != nil:
		return err
	default:
		n = binary.BigEndian.Uint64(v)
	}
	return tx.Set([]byte(k), binary.BigEndian.AppendUint64(nil, n+1))
}

func TestConcurrentConflictingUpdatesAllSucceed(t *testing.T) {
	t.Parallel()
	db, err := Open(Options{Dir: t.TempDir(), SyncWrites: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
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
}

func TestConcurrentCounterIsExact(t *testing.T) {
	t.Parallel()
	db, err := Open(Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
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
}

func TestBatchTooBigIsSplit(t *testing.T) {
	t.Parallel()
	db, err := Open(Options{InMemory: true, MemTableMB: 8})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	// Each Update alone fits (about 0.9 MB of a 1.2 MB limit); two together do not.
	big := make([]byte, 900<<10)
	var wg sync.WaitGroup
	for i := 0; i < 20; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			err := db.Update(context.Background(), func(tx *Txn) error { return tx.Set([]byte(fmt.Sprintf("big/%02d", i)), big) })
			if err != nil {
				t.Errorf("Update big %d: %v", i, err)
			}
		}(i)
	}
	wg.Wait()
	n := 0
	_ = db.View(context.Background(), func(tx *Txn) error {
		return tx.Iterate(IterOptions{Prefix: []byte("big/"), KeysOnly: true}, func(_, _ []byte) (bool, error) { n++; return true, nil })
	})
	if n != 20 {
		t.Errorf("%d big values stored, want 20", n)
	}
	// One Update that alone exceeds a commit is refused, and writes nothing.
	err = db.Update(context.Background(), func(tx *Txn) error {
		for i := 0; i < 3; i++ {
			if err := tx.Set([]byte(fmt.Sprintf("huge/%d", i)), big); err != nil {
				return err
			}
		}
		return nil
	})
	if !errors.Is(err, ErrTooBig) {
		t.Errorf("Update of 2.7 MB = %v, want ErrTooBig", err)
	}
}

func TestCloseDrainsQueuedUpdates(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db, err := Open(Options{Dir: dir, SyncWrites: true})
	if err != nil {
		t.Fatal(err)
	}
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
	db, err = Open(Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
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
}

func TestFailedUpdateWritesNothing(t *testing.T) {
	t.Parallel()
	db, err := Open(Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
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
}

func TestUpdateSeesItsOwnWrites(t *testing.T) {
	t.Parallel()
	db, err := Open(Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
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
	err = db.Update(ctx, func(tx *Txn) error {
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
}

func TestUpdatePanicReachesCaller(t *testing.T) {
	t.Parallel()
	db, err := Open(Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
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
}

// Updates that fill several memtables (each change of write-ahead log makes the syncer sync
// them all) are all there after a reopen.
func TestDurableAcrossMemtableRotation(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db, err := Open(Options{Dir: dir, SyncWrites: true, MemTableMB: 8})
	if err != nil {
		t.Fatal(err)
	}
	val := make([]byte, 8000)
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				k := fmt.Sprintf("r/%d/%03d", g, i)
				if err := db.Update(context.Background(), func(tx *Txn) error { return tx.Set([]byte(k), val) }); err != nil {
					t.Errorf("Update %s: %v", k, err)
					return
				}
			}
		}(g)
	}
	wg.Wait()
	if db.SyncStats() == 0 {
		t.Errorf("no sync ran for durable Updates")
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db, err = Open(Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	n := 0
	_ = db.View(context.Background(), func(tx *Txn) error {
		return tx.Iterate(IterOptions{Prefix: []byte("r/"), KeysOnly: true}, func(_, _ []byte) (bool, error) { n++; return true, nil })
	})
	if n != 1600 {
		t.Errorf("%d of 1600 keys after reopen", n)
	}
}

func TestLogFilesInNumericOrder(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, name := range []string{"100000.mem", "99999.mem", "00007.mem", "000001.vlog", "000012.vlog", "MANIFEST", "000003.sst"} {
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	mems, vlogs, err := logFiles(dir)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(mems) != "[00007.mem 99999.mem 100000.mem]" || fmt.Sprint(vlogs) != "[000001.vlog 000012.vlog]" {
		t.Errorf("logFiles = %v %v", mems, vlogs)
	}
}

// A write badger refuses (an empty key) fails its own Update only; the others commit.
func TestRefusedWriteFailsItsUpdateOnly(t *testing.T) {
	t.Parallel()
	db, err := Open(Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var wg sync.WaitGroup
	for i := 0; i < 50; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			k := fmt.Sprintf("k/%02d", i)
			if i%10 == 3 {
				k = ""
			}
			err := db.Update(context.Background(), func(tx *Txn) error { return tx.Set([]byte(k), []byte("v")) })
			if (err != nil) != (k == "") {
				t.Errorf("Update(%q) = %v", k, err)
			}
		}(i)
	}
	wg.Wait()
	n := 0
	_ = db.View(context.Background(), func(tx *Txn) error {
		return tx.Iterate(IterOptions{Prefix: []byte("k/"), KeysOnly: true}, func(_, _ []byte) (bool, error) { n++; return true, nil })
	})
	if n != 45 {
		t.Errorf("%d keys written, want 45", n)
	}
}
