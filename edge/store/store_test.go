package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	mathrand "math/rand/v2"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/oklog/ulid/v2"
)

func TestUpdateViewIterate(t *testing.T) {
	eachBackend(t, func(t *testing.T, b testBackend) {
		ctx := context.Background()
		db := b.open(t, Options{})
		err := db.Update(ctx, func(tx *Txn) error {
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
	})
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
	for _, id := range ids {
		// Lower-case Crockford base32 of a ULID, as ulid spells it upper-case.
		u, err := ulid.ParseStrict(strings.ToUpper(id))
		if len(id) != 26 || err != nil || strings.ToLower(u.String()) != id {
			t.Fatalf("NewID %q: not a lower-case ULID (%v)", id, err)
		}
	}
}

func TestSyncWritesSurviveReopen(t *testing.T) {
	eachBackend(t, func(t *testing.T, b testBackend) {
		ctx := context.Background()
		opts := b.fresh(t)
		opts.SyncWrites = true
		db := b.open(t, opts)
		if err := db.Update(ctx, func(tx *Txn) error { return tx.Set([]byte("a"), []byte("1")) }); err != nil {
			t.Fatal(err)
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		opts.SyncWrites = false
		db = b.open(t, opts)
		_ = db.View(ctx, func(tx *Txn) error {
			if v, err := tx.Get([]byte("a")); err != nil || string(v) != "1" {
				t.Errorf("after reopen Get = %q, %v", v, err)
			}
			return nil
		})
	})
}

func TestOpenUnknownBackend(t *testing.T) {
	t.Parallel()
	if db, err := Open(Options{Backend: "sqlite"}); err == nil {
		db.Close()
		t.Errorf("Open(Backend: sqlite) = nil error, want an unknown-backend error")
	}
	if db, err := Open(Options{Backend: BackendPostgres}); err == nil {
		db.Close()
		t.Errorf("Open(Backend: postgres) without a URL = nil error, want an error")
	}
}

// iterKeys are stored keys whose order is bytewise, not that of any text collation: upper
// case before lower, bytes above 0x7f and 0xff last, a key that is a prefix of another first.
var iterKeys = func() []string {
	keys := []string{"p/A", "p/a", "p/a/", "p/a0", "p/b", "p/\x00", "p/\x7f", "p/\x80", "p/\xc3\xa9", "p/\xff", "p/\xff\xff", "q/x", "o/z", "p"}
	for i := 0; i < 1500; i++ { // enough to cross Iterate's batches on postgres
		keys = append(keys, fmt.Sprintf("p/n/%05d", i))
	}
	return keys
}()

// naiveScan is what Iterate must visit: the keys below o.Prefix from o.Start on, in order.
func naiveScan(keys []string, o IterOptions) []string {
	var out []string
	for _, k := range keys {
		if !strings.HasPrefix(k, string(o.Prefix)) {
			continue
		}
		if o.Start != nil {
			if c := bytes.Compare([]byte(k), o.Start); (!o.Reverse && c < 0) || (o.Reverse && c > 0) {
				continue
			}
		}
		out = append(out, k)
	}
	sort.Strings(out) // Go compares strings bytewise
	if o.Reverse {
		for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
			out[i], out[j] = out[j], out[i]
		}
	}
	return out
}

func TestIterateOrderAndBounds(t *testing.T) {
	tests := []struct {
		name  string
		o     IterOptions
		limit int // stop after this many keys (0: all)
	}{
		{name: "prefix", o: IterOptions{Prefix: []byte("p/")}},
		{name: "prefix reverse", o: IterOptions{Prefix: []byte("p/"), Reverse: true}},
		{name: "prefix keys only", o: IterOptions{Prefix: []byte("p/"), KeysOnly: true}},
		{name: "everything", o: IterOptions{}},
		{name: "everything reverse", o: IterOptions{Reverse: true}},
		{name: "start", o: IterOptions{Prefix: []byte("p/"), Start: []byte("p/n/00700")}},
		{name: "start between keys", o: IterOptions{Prefix: []byte("p/"), Start: []byte("p/a00")}},
		{name: "start reverse", o: IterOptions{Prefix: []byte("p/"), Start: []byte("p/n/00700"), Reverse: true}},
		{name: "start reverse between keys", o: IterOptions{Prefix: []byte("p/"), Start: []byte("p/a00"), Reverse: true}},
		{name: "prefix of 0xff", o: IterOptions{Prefix: []byte("p/\xff")}},
		{name: "prefix of 0xff reverse", o: IterOptions{Prefix: []byte("p/\xff"), Reverse: true}},
		{name: "no match", o: IterOptions{Prefix: []byte("zz/")}},
		{name: "stop early", o: IterOptions{Prefix: []byte("p/n/")}, limit: 40},
		{name: "stop early reverse", o: IterOptions{Prefix: []byte("p/n/"), Reverse: true}, limit: 40},
	}
	eachBackend(t, func(t *testing.T, b testBackend) {
		ctx := context.Background()
		db := b.open(t, Options{})
		val := func(k string) []byte { return []byte("v:" + k) }
		if err := db.Update(ctx, func(tx *Txn) error {
			for _, k := range iterKeys {
				if err := tx.Set([]byte(k), val(k)); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		for _, tc := range tests {
			want := naiveScan(iterKeys, tc.o)
			if tc.limit > 0 && len(want) > tc.limit {
				want = want[:tc.limit]
			}
			var got []string
			err := db.View(ctx, func(tx *Txn) error {
				return tx.Iterate(tc.o, func(k, v []byte) (bool, error) {
					got = append(got, string(k))
					switch {
					case tc.o.KeysOnly && v != nil:
						t.Errorf("%s: KeysOnly Iterate gave value %q", tc.name, v)
					case !tc.o.KeysOnly && !bytes.Equal(v, val(string(k))):
						t.Errorf("%s: Iterate value of %q = %q", tc.name, k, v)
					}
					return tc.limit == 0 || len(got) < tc.limit, nil
				})
			})
			if err != nil {
				t.Fatalf("%s: Iterate: %v", tc.name, err)
			}
			if g, w := fmt.Sprintf("%q", got), fmt.Sprintf("%q", want); g != w {
				i := 0
				for i < len(got) && i < len(want) && got[i] == want[i] {
					i++
				}
				t.Errorf("%s: Iterate visited %d keys, want %d; they differ from index %d: got %.300s, want %.300s",
					tc.name, len(got), len(want), i, fmt.Sprintf("%q", got[i:]), fmt.Sprintf("%q", want[i:]))
			}
		}
	})
}

// Iterate's callback may read other keys of the same transaction while the scan goes on.
func TestIterateCallbackReads(t *testing.T) {
	eachBackend(t, func(t *testing.T, b testBackend) {
		ctx := context.Background()
		db := b.open(t, Options{})
		if err := db.Update(ctx, func(tx *Txn) error {
			for i := 0; i < 300; i++ {
				if err := tx.Set([]byte(fmt.Sprintf("i/%03d", i)), []byte(fmt.Sprintf("d/%03d", i))); err != nil {
					return err
				}
				if err := tx.Set([]byte(fmt.Sprintf("d/%03d", i)), []byte(fmt.Sprint(i))); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		n := 0
		err := db.Update(ctx, func(tx *Txn) error {
			n = 0
			return tx.Iterate(IterOptions{Prefix: []byte("i/")}, func(_, v []byte) (bool, error) {
				d, err := tx.Get(v)
				if err != nil {
					return false, err
				}
				n++
				return true, tx.Set(v, append(d, '!'))
			})
		})
		if err != nil || n != 300 {
			t.Fatalf("Update iterating and reading = %v after %d keys, want nil after 300", err, n)
		}
		_ = db.View(ctx, func(tx *Txn) error {
			if v, err := tx.Get([]byte("d/299")); err != nil || string(v) != "299!" {
				t.Errorf("Get(d/299) = %q, %v; want 299!", v, err)
			}
			return nil
		})
	})
}

// Empty and nil values are stored and read back as nil (badger's behaviour).
func TestEmptyValues(t *testing.T) {
	eachBackend(t, func(t *testing.T, b testBackend) {
		ctx := context.Background()
		db := b.open(t, Options{})
		if err := db.Update(ctx, func(tx *Txn) error {
			return errors.Join(tx.Set([]byte("e/nil"), nil), tx.Set([]byte("e/empty"), []byte{}))
		}); err != nil {
			t.Fatal(err)
		}
		_ = db.View(ctx, func(tx *Txn) error {
			for _, k := range []string{"e/nil", "e/empty"} {
				if v, err := tx.Get([]byte(k)); err != nil || len(v) != 0 {
					t.Errorf("Get(%s) = %q, %v; want an empty value", k, v, err)
				}
				if ok, err := tx.Has([]byte(k)); !ok || err != nil {
					t.Errorf("Has(%s) = %v, %v; want true", k, ok, err)
				}
			}
			return nil
		})
	})
}

// One Update's writes past the backend's bound get ErrTooBig and write nothing.
func TestUpdateTooBig(t *testing.T) {
	eachBackend(t, func(t *testing.T, b testBackend) {
		ctx := context.Background()
		db := b.open(t, Options{})
		big := make([]byte, 1<<20)
		err := db.Update(ctx, func(tx *Txn) error {
			for i := 0; i <= PostgresMaxBytes>>20; i++ {
				if err := tx.Set([]byte(fmt.Sprintf("big/%02d", i)), big); err != nil {
					return err
				}
			}
			return nil
		})
		if !errors.Is(err, ErrTooBig) {
			t.Errorf("Update of %d MB = %v, want ErrTooBig", PostgresMaxBytes>>20+1, err)
		}
		_ = db.View(ctx, func(tx *Txn) error {
			if ok, _ := tx.Has([]byte("big/00")); ok {
				t.Errorf("a refused Update wrote big/00")
			}
			return nil
		})
	})
}

// A View sees one snapshot: a write committed while it runs is not in it.
func TestViewIsASnapshot(t *testing.T) {
	eachBackend(t, func(t *testing.T, b testBackend) {
		ctx := context.Background()
		db := b.open(t, Options{})
		set := func(v string) {
			if err := db.Update(ctx, func(tx *Txn) error { return tx.Set([]byte("s"), []byte(v)) }); err != nil {
				t.Fatal(err)
			}
		}
		set("before")
		_ = db.View(ctx, func(tx *Txn) error {
			if v, _ := tx.Get([]byte("s")); string(v) != "before" {
				t.Errorf("first Get = %q", v)
			}
			set("after")
			if v, _ := tx.Get([]byte("s")); string(v) != "before" {
				t.Errorf("Get after a concurrent commit = %q, want the snapshot's before", v)
			}
			return nil
		})
	})
}

// Updates are serializable: two functions that each check a condition on keys the other
// writes never both act (write skew, which snapshot isolation alone allows).
func TestUpdatesAreSerializable(t *testing.T) {
	eachBackend(t, func(t *testing.T, b testBackend) {
		ctx := context.Background()
		db := b.open(t, Options{})
		for round := 0; round < 20; round++ {
			keys := []string{fmt.Sprintf("%d/a", round), fmt.Sprintf("%d/b", round), fmt.Sprintf("%d/c", round)}
			var wg sync.WaitGroup
			for _, mine := range keys {
				wg.Add(1)
				go func() {
					defer wg.Done()
					err := db.Update(ctx, func(tx *Txn) error {
						for _, k := range keys {
							if ok, err := tx.Has([]byte(k)); err != nil || ok {
								return err // someone acted already
							}
						}
						return tx.Set([]byte(mine), []byte("on"))
					})
					if err != nil {
						t.Errorf("Update: %v", err)
					}
				}()
			}
			wg.Wait()
			on := 0
			_ = db.View(ctx, func(tx *Txn) error {
				for _, k := range keys {
					if ok, _ := tx.Has([]byte(k)); ok {
						on++
					}
				}
				return nil
			})
			if on != 1 {
				t.Fatalf("round %d: %d of 3 keys set, want exactly 1", round, on)
			}
		}
	})
}

// An Update asked with a context already ended writes nothing.
func TestUpdateContextEnded(t *testing.T) {
	eachBackend(t, func(t *testing.T, b testBackend) {
		db := b.open(t, Options{})
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if err := db.Update(ctx, func(tx *Txn) error { return tx.Set([]byte("x"), nil) }); !errors.Is(err, context.Canceled) {
			t.Errorf("Update with an ended context = %v, want context.Canceled", err)
		}
		if err := db.View(ctx, func(tx *Txn) error { return nil }); !errors.Is(err, context.Canceled) {
			t.Errorf("View with an ended context = %v, want context.Canceled", err)
		}
	})
}

// A Batch writes many keys in several commits; Cancel drops what was not flushed.
func TestBatch(t *testing.T) {
	eachBackend(t, func(t *testing.T, b testBackend) {
		ctx := context.Background()
		db := b.open(t, Options{SyncWrites: true})
		bt := db.NewBatch()
		for i := 0; i < 5000; i++ {
			if err := bt.Set([]byte(fmt.Sprintf("b/%05d", i)), []byte(fmt.Sprint(i))); err != nil {
				t.Fatal(err)
			}
		}
		for i := 0; i < 5000; i += 10 {
			if err := bt.Delete([]byte(fmt.Sprintf("b/%05d", i))); err != nil {
				t.Fatal(err)
			}
		}
		if err := bt.Flush(); err != nil {
			t.Fatal(err)
		}
		bt = db.NewBatch()
		if err := bt.Set([]byte("b/cancelled"), []byte("x")); err != nil {
			t.Fatal(err)
		}
		bt.Cancel()
		n := 0
		_ = db.View(ctx, func(tx *Txn) error {
			return tx.Iterate(IterOptions{Prefix: []byte("b/")}, func(k, v []byte) (bool, error) {
				n++
				if string(k) == "b/cancelled" {
					t.Errorf("a cancelled Batch wrote %s", k)
				}
				if want := strings.TrimLeft(string(k[2:]), "0"); string(v) != want && !(want == "" && string(v) == "0") {
					t.Errorf("%s = %q", k, v)
				}
				return true, nil
			})
		})
		if n != 4500 {
			t.Errorf("%d keys after the Batch, want 4500", n)
		}
	})
}

// An empty key is refused on every backend, and its Update writes nothing.
func TestEmptyKeyRefused(t *testing.T) {
	eachBackend(t, func(t *testing.T, b testBackend) {
		ctx := context.Background()
		db := b.open(t, Options{})
		err := db.Update(ctx, func(tx *Txn) error {
			return errors.Join(tx.Set([]byte("ok"), []byte("v")), tx.Set(nil, []byte("v")))
		})
		if err == nil {
			t.Errorf("Update with an empty key = nil, want an error")
		}
		_ = db.View(ctx, func(tx *Txn) error {
			if ok, _ := tx.Has([]byte("ok")); ok {
				t.Errorf("the refused Update wrote its other key")
			}
			return nil
		})
	})
}

// The operational functions answer on every backend: Size counts the data, Sync makes
// non-durable commits durable, CommitStats counts the Updates committed.
func TestStatsSizeSync(t *testing.T) {
	eachBackend(t, func(t *testing.T, b testBackend) {
		ctx := context.Background()
		db := b.open(t, Options{SyncWrites: false})
		for i := 0; i < 50; i++ {
			if err := db.Update(ctx, func(tx *Txn) error {
				return tx.Set([]byte(fmt.Sprintf("s/%02d", i)), bytes.Repeat([]byte("x"), 1000))
			}); err != nil {
				t.Fatal(err)
			}
		}
		if err := db.Update(ctx, func(tx *Txn) error { return errors.New("refused") }); err == nil {
			t.Fatal("a failing Update returned nil")
		}
		if err := db.Sync(); err != nil {
			t.Errorf("Sync = %v", err)
		}
		commits, ops := db.CommitStats()
		if ops != 50 || commits == 0 || commits > ops {
			t.Errorf("CommitStats = %d commits, %d ops; want 50 ops in 1..50 commits", commits, ops)
		}
		if db.SyncWrites() {
			t.Errorf("SyncWrites = true for a store opened without")
		}
		if b.name == BackendPostgres { // badger's in-memory tables have no size until flushed
			if lsm, _ := db.Size(); lsm <= 0 {
				t.Errorf("Size = %d, want the table's size", lsm)
			}
		}
	})
}

// A key of MaxKeyLen bytes (random: PostgreSQL cannot compress it under its index limit) is
// written and read on every backend; one byte more is refused with ErrKeyTooLong on every
// backend alike, by Set and by Batch.Set, and fails its own Update only: the Updates grouped
// with it commit.
func TestKeyTooLong(t *testing.T) {
	eachBackend(t, func(t *testing.T, b testBackend) {
		ctx := context.Background()
		db := b.open(t, Options{})
		rnd := mathrand.New(mathrand.NewPCG(1, 2))
		long := make([]byte, MaxKeyLen+1)
		for i := range long {
			long[i] = byte(rnd.Uint32())
		}
		copy(long, "long/")
		max := long[:MaxKeyLen]
		if err := db.Update(ctx, func(tx *Txn) error { return tx.Set(max, []byte("v")) }); err != nil {
			t.Fatalf("Update of a %d-byte key = %v", MaxKeyLen, err)
		}
		var wg sync.WaitGroup
		errs := make([]error, 10)
		for i := range errs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				k := []byte(fmt.Sprintf("ok/%d", i))
				errs[i] = db.Update(ctx, func(tx *Txn) error {
					if i == 4 {
						if err := tx.Set(k, []byte("v")); err != nil {
							return err
						}
						return tx.Set(long, []byte("v"))
					}
					return tx.Set(k, []byte("v"))
				})
			}()
		}
		wg.Wait()
		for i, err := range errs {
			if (i == 4) != (err != nil) {
				t.Errorf("Update %d = %v", i, err)
			}
		}
		if !errors.Is(errs[4], ErrKeyTooLong) {
			t.Errorf("Update of a %d-byte key = %v, want ErrKeyTooLong", len(long), errs[4])
		}
		batch := db.NewBatch()
		if err := batch.Set(long, []byte("v")); !errors.Is(err, ErrKeyTooLong) {
			t.Errorf("Batch.Set of a %d-byte key = %v, want ErrKeyTooLong", len(long), err)
		}
		if err := batch.Flush(); err != nil {
			t.Fatal(err)
		}
		_ = db.View(ctx, func(tx *Txn) error {
			if v, err := tx.Get(max); err != nil || string(v) != "v" {
				t.Errorf("Get of the %d-byte key = %q, %v", MaxKeyLen, v, err)
			}
			if ok, _ := tx.Has([]byte("ok/4")); ok {
				t.Errorf("the refused Update wrote its other key")
			}
			if ok, err := tx.Has(long); ok || err != nil {
				t.Errorf("Has of the refused key = %v, %v", ok, err)
			}
			n := 0
			_ = tx.Iterate(IterOptions{Prefix: []byte("ok/"), KeysOnly: true}, func(_, _ []byte) (bool, error) { n++; return true, nil })
			if n != 9 {
				t.Errorf("%d of the 9 other Updates committed", n)
			}
			return nil
		})
	})
}
