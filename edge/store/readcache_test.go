package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// readCacheEnv is a store with the keys c/0..c/9 (value "v0".."v9"), the version key ver/1
// and an uncovered key u, and a ReadCache of the keys below c/ versioned by ver/.
func readCacheEnv(t *testing.T, b testBackend) (*DB, *ReadCache) {
	t.Helper()
	db := b.open(t, Options{})
	err := db.Update(context.Background(), func(tx *Txn) error {
		for i := 0; i < 10; i++ {
			if err := tx.Set([]byte(fmt.Sprintf("c/%d", i)), []byte(fmt.Sprintf("v%d", i))); err != nil {
				return err
			}
		}
		if err := tx.Set([]byte("u"), []byte("u0")); err != nil {
			return err
		}
		return tx.Set([]byte("ver/1"), []byte("1"))
	})
	if err != nil {
		t.Fatal(err)
	}
	return db, NewReadCache([]byte("ver/"), func(k []byte) bool { return bytes.HasPrefix(k, []byte("c/")) }, NewReadBudget(1<<20))
}

// set writes key=val, with a new version (bump) or behind the cache's back (a writer that
// breaks the rule, which shows what the cache serves).
func set(t *testing.T, db *DB, key, val string, bump string) {
	t.Helper()
	err := db.Update(context.Background(), func(tx *Txn) error {
		if bump != "" {
			if err := tx.Set([]byte("ver/1"), []byte(bump)); err != nil {
				return err
			}
		}
		if val == "" {
			return tx.Delete([]byte(key))
		}
		return tx.Set([]byte(key), []byte(val))
	})
	if err != nil {
		t.Fatal(err)
	}
}

// cachedRead is what one ViewCached sees: Get of key, GetMany of keys, and a scan of c/ (first
// n entries, all when n is 0, reverse when asked).
func cachedRead(t *testing.T, db *DB, c *ReadCache, fn func(tx *Txn) (string, error)) string {
	t.Helper()
	var out string
	err := db.ViewCached(context.Background(), c, func(tx *Txn) error {
		var err error
		out, err = fn(tx)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func getOf(key string) func(tx *Txn) (string, error) {
	return func(tx *Txn) (string, error) {
		v, err := tx.Get([]byte(key))
		if errors.Is(err, ErrNotFound) {
			return "<none>", nil
		}
		return string(v), err
	}
}

func scanOf(n int, reverse, keysOnly bool) func(tx *Txn) (string, error) {
	return func(tx *Txn) (string, error) {
		var parts []string
		err := tx.Iterate(IterOptions{Prefix: []byte("c/"), Reverse: reverse, KeysOnly: keysOnly}, func(k, v []byte) (bool, error) {
			parts = append(parts, string(k)+"="+string(v))
			return n == 0 || len(parts) < n, nil
		})
		return strings.Join(parts, ","), err
	}
}

func getManyOf(keys ...string) func(tx *Txn) (string, error) {
	return func(tx *Txn) (string, error) {
		ks := make([][]byte, len(keys))
		for i, k := range keys {
			ks[i] = []byte(k)
		}
		vals, err := tx.GetMany(ks)
		parts := make([]string, len(vals))
		for i, v := range vals {
			parts[i] = string(v)
			if v == nil {
				parts[i] = "<none>"
			}
		}
		return strings.Join(parts, ","), err
	}
}

func TestReadCacheServesItsVersion(t *testing.T) {
	eachBackend(t, func(t *testing.T, b testBackend) {
		db, c := readCacheEnv(t, b)
		cached := b.name == BackendPostgres // badger: ViewCached is View
		if got := cachedRead(t, db, c, getOf("c/1")); got != "v1" {
			t.Fatalf("Get(c/1) = %q, want v1", got)
		}
		if got := cachedRead(t, db, c, getOf("c/missing")); got != "<none>" {
			t.Fatalf("Get(c/missing) = %q, want none", got)
		}
		// Behind the cache's back: a cached read keeps its value, an uncovered key does not.
		set(t, db, "c/1", "changed", "")
		set(t, db, "c/missing", "there", "")
		set(t, db, "u", "u1", "")
		want, wantMissing := "changed", "there"
		if cached {
			want, wantMissing = "v1", "<none>"
		}
		if got := cachedRead(t, db, c, getOf("c/1")); got != want {
			t.Errorf("Get(c/1) after an unversioned write = %q, want %q", got, want)
		}
		if got := cachedRead(t, db, c, getOf("c/missing")); got != wantMissing {
			t.Errorf("Get(c/missing) after an unversioned write = %q, want %q", got, wantMissing)
		}
		if got := cachedRead(t, db, c, getOf("u")); got != "u1" {
			t.Errorf("Get(u), not covered = %q, want u1", got)
		}
		if got := cachedRead(t, db, c, getManyOf("c/1", "c/2", "c/missing", "u")); got != want+",v2,"+wantMissing+",u1" {
			t.Errorf("GetMany = %q", got)
		}
		// A versioned write is seen by the next read, whatever the cache held.
		set(t, db, "c/2", "v2b", "2")
		if got := cachedRead(t, db, c, getManyOf("c/1", "c/2", "c/missing")); got != "changed,v2b,there" {
			t.Errorf("GetMany after a new version = %q, want changed,v2b,there", got)
		}
		if got := cachedRead(t, db, c, getOf("c/1")); got != "changed" {
			t.Errorf("Get(c/1) after a new version = %q, want changed", got)
		}
		// Deleting the version is a change too.
		set(t, db, "c/1", "again", "")
		err := db.Update(context.Background(), func(tx *Txn) error {
			if err := tx.Delete([]byte("ver/1")); err != nil {
				return err
			}
			return tx.Set([]byte("ver/2"), []byte("x"))
		})
		if err != nil {
			t.Fatal(err)
		}
		if got := cachedRead(t, db, c, getOf("c/1")); got != "again" {
			t.Errorf("Get(c/1) after the version key moved = %q, want again", got)
		}
	})
}

func TestReadCacheScans(t *testing.T) {
	eachBackend(t, func(t *testing.T, b testBackend) {
		db, c := readCacheEnv(t, b)
		cached := b.name == BackendPostgres
		all := "c/0=v0,c/1=v1,c/2=v2,c/3=v3,c/4=v4,c/5=v5,c/6=v6,c/7=v7,c/8=v8,c/9=v9"
		// A scan stopped early keeps its start; a longer one goes on in the store from there.
		if got := cachedRead(t, db, c, scanOf(3, false, false)); got != "c/0=v0,c/1=v1,c/2=v2" {
			t.Fatalf("first 3 = %q", got)
		}
		set(t, db, "c/0", "x0", "") // behind the cache's back: in the cached start
		set(t, db, "c/7", "x7", "") // behind the cache's back: past it
		want := strings.NewReplacer("v0", "x0", "v7", "x7").Replace(all)
		if cached {
			want = strings.Replace(all, "v7", "x7", 1)
		}
		if got := cachedRead(t, db, c, scanOf(0, false, false)); got != want {
			t.Errorf("full scan = %q, want %q", got, want)
		}
		// The whole scan is kept now: a key added behind the cache's back is not seen.
		set(t, db, "c/55", "x55", "")
		if got := cachedRead(t, db, c, scanOf(0, false, false)); cached && got != want {
			t.Errorf("full scan, kept = %q, want %q", got, want)
		}
		// A scan from a key inside a kept part is served from it.
		from3 := func(tx *Txn) (string, error) {
			var parts []string
			err := tx.Iterate(IterOptions{Prefix: []byte("c/"), Start: []byte("c/3")}, func(k, v []byte) (bool, error) {
				parts = append(parts, string(k)+"="+string(v))
				return true, nil
			})
			return strings.Join(parts, ","), err
		}
		want3 := "c/3=v3,c/4=v4,c/5=v5,c/6=v6,c/7=x7,c/8=v8,c/9=v9"
		if !cached {
			want3 = "c/3=v3,c/4=v4,c/5=v5,c/55=x55,c/6=v6,c/7=x7,c/8=v8,c/9=v9"
		}
		if got := cachedRead(t, db, c, from3); got != want3 {
			t.Errorf("scan from c/3 = %q, want %q", got, want3)
		}
		// Reverse and keys-only scans are scans of their own.
		set(t, db, "c/9", "x9", "")
		gotRev := cachedRead(t, db, c, scanOf(2, true, false))
		if gotRev != "c/9=x9,c/8=v8" {
			t.Errorf("reverse first 2 = %q, want c/9=x9,c/8=v8", gotRev)
		}
		if got := cachedRead(t, db, c, scanOf(0, true, true)); !strings.HasPrefix(got, "c/9=,c/8=,c/7=,c/6=,c/55=,c/5=") {
			t.Errorf("reverse keys-only scan = %q", got)
		}
		// A new version: everything is read again.
		set(t, db, "c/3", "x3", "3")
		want = "c/0=x0,c/1=v1,c/2=v2,c/3=x3,c/4=v4,c/5=v5,c/55=x55,c/6=v6,c/7=x7,c/8=v8,c/9=x9"
		if got := cachedRead(t, db, c, scanOf(0, false, false)); got != want {
			t.Errorf("full scan after a new version = %q, want %q", got, want)
		}
	})
}

func TestReadCacheBoundsAScan(t *testing.T) {
	eachBackend(t, func(t *testing.T, b testBackend) {
		db, c := readCacheEnv(t, b)
		err := db.Update(context.Background(), func(tx *Txn) error {
			for i := 0; i < readCacheScanLen+10; i++ {
				if err := tx.Set([]byte(fmt.Sprintf("c/x%05d", i)), []byte("v")); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		count := func(tx *Txn) (string, error) {
			n := 0
			err := tx.Iterate(IterOptions{Prefix: []byte("c/x")}, func(k, v []byte) (bool, error) {
				n++
				return true, nil
			})
			return fmt.Sprint(n), err
		}
		want := fmt.Sprint(readCacheScanLen + 10)
		if got := cachedRead(t, db, c, count); got != want {
			t.Fatalf("scan of %s keys = %s", want, got)
		}
		// Too long to keep: a key added behind the cache's back is seen.
		set(t, db, "c/x99999", "v", "")
		want = fmt.Sprint(readCacheScanLen + 11)
		if got := cachedRead(t, db, c, count); got != want {
			t.Errorf("scan after an unversioned write = %s, want %s (a scan too long to keep is read again)", got, want)
		}
	})
}

// Caches that share a budget hold no more than it together: one that would go past it drops
// what it holds first.
func TestReadCacheBudget(t *testing.T) {
	db := testBackends[1].open(t, Options{}) // postgres: on badger nothing is cached
	b := NewReadBudget(4096)
	covers := func(k []byte) bool { return true }
	c1, c2 := NewReadCache([]byte("ver1/"), covers, b), NewReadCache([]byte("ver2/"), covers, b)
	big := strings.Repeat("x", 1000)
	err := db.Update(context.Background(), func(tx *Txn) error {
		for i := 0; i < 20; i++ {
			if err := tx.Set([]byte(fmt.Sprintf("k%02d", i)), []byte(big)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 20; i++ {
		c := c1
		if i%2 == 1 {
			c = c2
		}
		cachedRead(t, db, c, getOf(fmt.Sprintf("k%02d", i)))
		if u := b.Used(); u > 4096 {
			t.Fatalf("after %d reads the caches hold %d bytes, over their budget of 4096", i+1, u)
		}
	}
	c1.Drop()
	c2.Drop()
	if u := b.Used(); u != 0 {
		t.Errorf("after Drop the budget counts %d bytes, want 0", u)
	}
}

// ViewAt serves a scan from the cache while the caller's version stays, reads again at a newer
// one, and a View at an older version reads the store without dropping what the cache holds.
func TestReadCacheViewAt(t *testing.T) {
	eachBackend(t, func(t *testing.T, b testBackend) {
		db, c := readCacheEnv(t, b)
		at := func(version uint64, fn func(tx *Txn) (string, error)) string {
			t.Helper()
			var out string
			err := db.ViewAt(context.Background(), c, version, func(tx *Txn) error {
				var err error
				out, err = fn(tx)
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			return out
		}
		first3 := scanOf(3, false, false)
		if got := at(1, first3); got != "c/0=v0,c/1=v1,c/2=v2" {
			t.Fatalf("ViewAt(1) first 3 = %q", got)
		}
		set(t, db, "c/0", "x0", "") // the ver/ keys do not matter to ViewAt
		if got := at(1, first3); got != "c/0=v0,c/1=v1,c/2=v2" {
			t.Errorf("ViewAt(1) first 3, kept = %q, want the kept v0", got)
		}
		if got := at(2, first3); got != "c/0=x0,c/1=v1,c/2=v2" {
			t.Errorf("ViewAt(2) first 3 = %q, want x0 read again", got)
		}
		set(t, db, "c/1", "x1", "")
		if got := at(1, first3); got != "c/0=x0,c/1=x1,c/2=v2" {
			t.Errorf("ViewAt(1) after version 2 = %q, want the store's values", got)
		}
		if got := at(2, first3); got != "c/0=x0,c/1=v1,c/2=v2" {
			t.Errorf("ViewAt(2) after a View at 1 = %q, want what version 2 kept", got)
		}
		// A keys-only scan keeps keys only; the uncovered key is read from the store.
		if got := at(2, scanOf(2, true, true)); got != "c/9=,c/8=" {
			t.Errorf("ViewAt(2) reverse keys-only = %q", got)
		}
		if got := at(2, scanOf(2, true, true)); got != "c/9=,c/8=" {
			t.Errorf("ViewAt(2) reverse keys-only, kept = %q", got)
		}
		set(t, db, "u", "u1", "")
		if got := at(2, getOf("u")); got != "u1" {
			t.Errorf("ViewAt(2) Get(u), not covered = %q, want u1", got)
		}
	})
}
