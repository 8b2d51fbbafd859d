package fields

import (
	"bytes"
	"context"
	"fmt"
	"math/rand"
	"sort"
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/edge/edgetest/storetest"
	"github.com/gatehouse-dev/gatehouse/edge/store"
)

// longStrings returns strings around MaxInline bytes long that share long prefixes, hold
// 0x00 bytes (escaped in encodings) and 0xFF bytes, and a few short ones, all distinct.
func longStrings(rnd *rand.Rand, n int) []string {
	base := strings.Repeat("x", MaxInline-2)
	nul := strings.Repeat("\x00", MaxInline) // escaped: its key form is 2*MaxInline+3 bytes
	seen := map[string]bool{}
	var out []string
	for len(out) < n {
		var s string
		switch rnd.Intn(6) {
		case 0:
			s = string(rune('a' + rnd.Intn(3)))
		case 1:
			s = base[:rnd.Intn(len(base))]
		case 2:
			s = nul + string([]byte{byte(rnd.Intn(3)), byte(rnd.Intn(3))})
		default:
			tail := make([]byte, rnd.Intn(6))
			for i := range tail {
				tail[i] = "\x00ab\xff"[rnd.Intn(4)]
			}
			s = base + string(tail) + strings.Repeat("y", rnd.Intn(3000))
		}
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// Between key forms that differ, key order is value order; a key form is never longer than
// 2*MaxInline+3 bytes; a long string's key form ends with the mark, a short string is its own.
func TestKeyFormOrder(t *testing.T) {
	rnd := rand.New(rand.NewSource(1))
	strs := longStrings(rnd, 300)
	for _, a := range strs {
		ka := keyForm(String(a))
		if len(ka) > 2*MaxInline+3 {
			t.Fatalf("keyForm of a %d-byte string is %d bytes", len(a), len(ka))
		}
		if long := len(a) > MaxInline; long != truncated(ka) || !long && !bytes.Equal(ka, String(a)) {
			t.Fatalf("keyForm of a %d-byte string = %x", len(a), ka)
		}
		if n, err := Len(append(bytes.Clone(ka), "id"...)); err != nil || n != len(ka) {
			t.Fatalf("Len(key form + id) = %d, %v, want %d", n, err, len(ka))
		}
		for _, b := range strs {
			kb := keyForm(String(b))
			if bytes.Equal(ka, kb) {
				continue
			}
			if got, want := bytes.Compare(ka, kb), strings.Compare(a, b); got != want {
				t.Fatalf("key forms of %d- and %d-byte strings compare %d, the strings %d", len(a), len(b), got, want)
			}
		}
	}
}

// Scans over entries of long strings that share their key forms see full values in exact
// order: every range (long and short bounds, open ends, exclusive ends), both directions,
// resumed after every position, against a sorted reference; Remove leaves nothing behind.
func TestScanLongStrings(t *testing.T) {
	t.Parallel()
	db, err := storetest.Open(t, store.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	prefix := store.Prefix("t", "long")
	rnd := rand.New(rand.NewSource(2))
	strs := longStrings(rnd, 60)
	var all []entry
	err = db.Update(ctx, func(txn *store.Txn) error {
		for i, s := range strs {
			for j := 0; j < 1+i%2; j++ { // some values twice, under two ids
				e := entry{String(s), fmt.Sprintf("r%03d-%d", i, j)}
				all = append(all, e)
				if err := Put(txn, prefix, [][]byte{e.enc}, e.id); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Slice(all, func(i, j int) bool {
		if c := bytes.Compare(all[i].enc, all[j].enc); c != 0 {
			return c < 0
		}
		return all[i].id < all[j].id
	})
	scan := func(o ScanOptions, limit int) []entry {
		var out []entry
		err := db.View(ctx, func(txn *store.Txn) error {
			return Scan(txn, prefix, o, func(enc []byte, id string) (bool, error) {
				if _, err := Decode(enc); err != nil {
					return false, fmt.Errorf("Scan handed on %x for %s: %v", enc, id, err)
				}
				out = append(out, entry{bytes.Clone(enc), id})
				return len(out) < limit, nil
			})
		})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	bound := func() Bound {
		if rnd.Intn(5) == 0 {
			return Bound{}
		}
		v := strs[rnd.Intn(len(strs))]
		if rnd.Intn(3) == 0 {
			v += "\x00" // not stored: falls between values
		}
		return Bound{Value: String(v), Inclusive: rnd.Intn(2) == 0}
	}
	for round := 0; round < 60; round++ {
		r := Range{Lo: bound(), Hi: bound()}
		for _, reverse := range []bool{false, true} {
			var want []entry
			for _, e := range all {
				if r.Contains(e.enc) {
					want = append(want, e)
				}
			}
			if reverse {
				for i, j := 0, len(want)-1; i < j; i, j = i+1, j-1 {
					want[i], want[j] = want[j], want[i]
				}
			}
			got := scan(ScanOptions{Range: r, Reverse: reverse}, 1<<30)
			if !same(got, want) {
				t.Fatalf("round %d reverse=%v: Scan gave %d entries, want %d (or out of order)", round, reverse, len(got), len(want))
			}
			// Resume after each position, a page of 3 at a time.
			for i := range want {
				after := Entry(prefix, want[i].enc, want[i].id)
				got := scan(ScanOptions{Range: r, Reverse: reverse, After: after}, 3)
				end := min(i+4, len(want))
				if !same(got, want[i+1:end]) {
					t.Fatalf("round %d reverse=%v: Scan after position %d gave %d entries, want %d (or out of order); range %s after %s", round, reverse, i, len(got), end-i-1, show(r), short(string(want[i].enc)))
				}
			}
		}
	}
	err = db.Update(ctx, func(txn *store.Txn) error {
		for _, e := range all {
			if err := Remove(txn, prefix, [][]byte{e.enc}, e.id); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	_ = db.View(ctx, func(txn *store.Txn) error {
		return txn.Iterate(store.IterOptions{Prefix: prefix, KeysOnly: true}, func(k, _ []byte) (bool, error) {
			t.Errorf("Remove left %q", k)
			return false, nil
		})
	})
}

// entry is an index entry of a test: full value and id.
type entry struct {
	enc []byte
	id  string
}

// same reports whether two lists of entries are equal, in order.
func same(a, b []entry) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !bytes.Equal(a[i].enc, b[i].enc) || a[i].id != b[i].id {
			return false
		}
	}
	return true
}

func short(s string) string {
	if len(s) > 20 {
		return fmt.Sprintf("%q..%d", s[:20], len(s))
	}
	return fmt.Sprintf("%q", s)
}

func show(r Range) string {
	return fmt.Sprintf("lo=%s,%v hi=%s,%v", short(string(r.Lo.Value)), r.Lo.Inclusive, short(string(r.Hi.Value)), r.Hi.Inclusive)
}

// An entry a store wrote before key forms (a long string whole in its key) is still read with
// its value, and Remove deletes it along with the key-form entry.
func TestLegacyLongEntry(t *testing.T) {
	t.Parallel()
	db, err := storetest.Open(t, store.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	prefix := store.Prefix("t", "legacy")
	long := String(strings.Repeat("v", MaxInline+100))
	err = db.Update(ctx, func(txn *store.Txn) error { return txn.Set(Entry(prefix, long, "old"), nil) })
	if err != nil {
		t.Fatal(err)
	}
	var got []entry
	_ = db.View(ctx, func(txn *store.Txn) error {
		return Scan(txn, prefix, ScanOptions{Range: Eq(long)}, func(enc []byte, id string) (bool, error) {
			got = append(got, entry{bytes.Clone(enc), id})
			return true, nil
		})
	})
	if !same(got, []entry{{long, "old"}}) {
		t.Fatalf("Scan of a whole-value entry = %d entries, want it", len(got))
	}
	if err := db.Update(ctx, func(txn *store.Txn) error { return Remove(txn, prefix, [][]byte{long}, "old") }); err != nil {
		t.Fatal(err)
	}
	_ = db.View(ctx, func(txn *store.Txn) error {
		return txn.Iterate(store.IterOptions{Prefix: prefix, KeysOnly: true}, func(k, _ []byte) (bool, error) {
			t.Errorf("Remove left %d-byte key", len(k))
			return false, nil
		})
	})
}
