package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"testing"
)

// TestJournalGroupsACommit: the journal entries of the Updates committed together are stored
// under one key, in the order each Update wrote them; a failed Update leaves none; reads inside
// the Update do not see them; a View cannot journal.
func TestJournalGroupsACommit(t *testing.T) {
	eachBackend(t, func(t *testing.T, b testBackend) {
		ctx := context.Background()
		db := b.open(t, Options{})
		prefix := Prefix("t", "j")
		// The first Update holds the committer until the others are queued behind it.
		hold, held := make(chan struct{}), make(chan struct{})
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := db.Update(ctx, func(tx *Txn) error {
				close(held)
				<-hold
				return tx.Journal(prefix, []byte("first"))
			})
			if err != nil {
				t.Error(err)
			}
		}()
		<-held
		const n = 20
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				err := db.Update(ctx, func(tx *Txn) error {
					for _, part := range []string{"a", "b"} {
						if err := tx.Journal(prefix, fmt.Appendf(nil, "u%02d%s", i, part)); err != nil {
							return err
						}
					}
					own := fmt.Appendf(nil, "u%02da", i)
					err := tx.Iterate(IterOptions{Prefix: prefix}, func(_, v []byte) (bool, error) {
						return true, JournalEntries(v, func(e []byte) error {
							if bytes.Equal(e, own) {
								t.Errorf("Update %d sees its own journal entry", i)
							}
							return nil
						})
					})
					if err != nil {
						return err
					}
					if i%5 == 0 {
						return errors.New("refused")
					}
					return tx.Set(Key("t", "k", fmt.Sprint(i)), []byte("v"))
				})
				if (i%5 == 0) != (err != nil) {
					t.Errorf("Update %d: %v", i, err)
				}
			}()
		}
		awaitQueued(t, db, n)
		close(hold)
		wg.Wait()
		var keys int
		var got []string
		err := db.View(ctx, func(tx *Txn) error {
			if err := tx.Journal(prefix, []byte("x")); !errors.Is(err, ErrReadOnly) {
				t.Errorf("Journal in a View = %v, want ErrReadOnly", err)
			}
			return tx.Iterate(IterOptions{Prefix: prefix}, func(_, v []byte) (bool, error) {
				keys++
				return true, JournalEntries(v, func(e []byte) error {
					got = append(got, string(e))
					return nil
				})
			})
		})
		if err != nil {
			t.Fatal(err)
		}
		var want []string
		for i := range n {
			if i%5 != 0 {
				want = append(want, fmt.Sprintf("u%02da", i), fmt.Sprintf("u%02db", i))
			}
		}
		for i := 1; i < len(got); i++ {
			if got[i][len(got[i])-1] == 'b' && got[i-1] != got[i][:3]+"a" {
				t.Errorf("entries %q then %q: an Update's entries are apart or out of order", got[i-1], got[i])
			}
		}
		if got[0] != "first" {
			t.Errorf("first entry %q, want the first commit's", got[0])
		}
		slices.Sort(want)
		rest := slices.Sorted(slices.Values(got[1:]))
		if !slices.Equal(rest, want) {
			t.Errorf("journal entries\n%q\nwant\n%q", rest, want)
		}
		if keys >= 1+len(want)/2 {
			t.Errorf("%d journal keys for %d committed Updates: not grouped", keys, 1+len(want)/2)
		}
	})
}

// TestJournalEntriesOfOneEntryValues: a value written before journals were grouped (one raw
// entry a key) reads as that entry; a list cut short is an error.
func TestJournalEntriesOfOneEntryValues(t *testing.T) {
	for _, c := range []struct {
		name string
		v    []byte
		want []string
		err  bool
	}{
		{"one raw entry", []byte("\x01demo/posts/r1\x00\x001700000000000\x00Hello"), []string{"\x01demo/posts/r1\x00\x001700000000000\x00Hello"}, false},
		{"empty value", nil, []string{""}, false},
		{"list", journalWrites([]logEntry{{[]byte("p/"), []byte("a")}, {[]byte("p/"), nil}, {[]byte("p/"), []byte("ccc")}})[0].val, []string{"a", "", "ccc"}, false},
		{"list cut short", []byte{journalList, 5, 'a', 'b'}, []string{}, true},
		{"bad length", []byte{journalList, 0xff, 0xff, 0xff}, []string{}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := []string{}
			err := JournalEntries(c.v, func(e []byte) error { got = append(got, string(e)); return nil })
			if (err != nil) != c.err || !slices.Equal(got, c.want) {
				t.Errorf("JournalEntries(%q) = %q, %v; want %q (error %v)", c.v, got, err, c.want, c.err)
			}
		})
	}
}

// FuzzJournalEntries: reading any stored bytes as a journal value never panics, and a value
// made of entries gives them back.
func FuzzJournalEntries(f *testing.F) {
	f.Add([]byte("\x01p/c/id\x00\x00\x00t"), []byte("second"))
	f.Add([]byte{journalList, 1, 'x'}, []byte{})
	f.Add([]byte{journalList, 0x80}, []byte{0xff})
	f.Fuzz(func(t *testing.T, a, b []byte) {
		_ = JournalEntries(a, func([]byte) error { return nil })
		v := journalWrites([]logEntry{{[]byte("j/"), a}, {[]byte("j/"), b}})[0].val
		var got [][]byte
		if err := JournalEntries(v, func(e []byte) error { got = append(got, bytes.Clone(e)); return nil }); err != nil {
			t.Fatal(err)
		}
		if len(got) != 2 || !bytes.Equal(got[0], a) || !bytes.Equal(got[1], b) {
			t.Fatalf("entries %q, %q came back as %q", a, b, got)
		}
	})
}

// awaitQueued waits until n Updates wait in db's committer queue.
func awaitQueued(t *testing.T, db *DB, n int) {
	var q *opQueue
	switch e := db.e.(type) {
	case *badgerEngine:
		q = &e.c.opQueue
	case *pgEngine:
		q = &e.c.opQueue
	default:
		t.Fatalf("no committer queue in %T", db.e)
	}
	for len(q.in) < n {
		runtime.Gosched()
	}
}
