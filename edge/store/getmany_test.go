package store

import (
	"context"
	"fmt"
	"testing"
)

// GetMany answers like one Get per key, on every backend: stored, missing, empty and
// repeated keys, and inside Update the transaction's own writes and deletes first.
func TestGetMany(t *testing.T) {
	eachBackend(t, func(t *testing.T, b testBackend) {
		db := b.open(t, Options{})
		ctx := context.Background()
		if err := db.Update(ctx, func(tx *Txn) error {
			for _, k := range []string{"r/a", "r/b", "r/c", "r/d"} {
				if err := tx.Set([]byte(k), []byte("old-"+k)); err != nil {
					return err
				}
			}
			return tx.Set([]byte("r/empty"), nil)
		}); err != nil {
			t.Fatal(err)
		}
		tests := []struct {
			name   string
			keys   []string
			update bool // read inside an Update that staged writes first
			want   string
		}{
			{"none", nil, false, ""},
			{"stored", []string{"r/c", "r/a"}, false, "old-r/c old-r/a"},
			{"missing", []string{"r/a", "r/zz", "s/a"}, false, "old-r/a <nil> <nil>"},
			{"empty value", []string{"r/empty", "r/zz"}, false, "\"\" <nil>"},
			{"repeated", []string{"r/b", "r/b"}, false, "old-r/b old-r/b"},
			{"staged wins", []string{"r/a", "r/b", "r/c", "r/new", "r/d"}, true, "new-r/a <nil> old-r/c new-r/new <nil>"},
			{"staged only", []string{"r/new", "r/b"}, true, "new-r/new <nil>"},
		}
		for _, tc := range tests {
			var got [][]byte
			read := func(tx *Txn) error {
				keys := make([][]byte, len(tc.keys))
				for i, k := range tc.keys {
					keys[i] = []byte(k)
				}
				vals, err := tx.GetMany(keys)
				got = vals
				return err
			}
			var err error
			if tc.update {
				err = db.Update(ctx, func(tx *Txn) error {
					for _, k := range []string{"r/a", "r/new"} {
						if err := tx.Set([]byte(k), []byte("new-"+k)); err != nil {
							return err
						}
					}
					for _, k := range []string{"r/b", "r/d"} {
						if err := tx.Delete([]byte(k)); err != nil {
							return err
						}
					}
					if err := read(tx); err != nil {
						return err
					}
					return errFailed // write nothing: the next cases see the stored values
				})
				if err == errFailed {
					err = nil
				}
			} else {
				err = db.View(ctx, read)
			}
			if err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
			if len(got) != len(tc.keys) {
				t.Fatalf("%s: %d values for %d keys", tc.name, len(got), len(tc.keys))
			}
			if g := show(got); g != tc.want {
				t.Errorf("%s: GetMany = %s, want %s", tc.name, g, tc.want)
			}
		}
	})
}

var errFailed = fmt.Errorf("test: roll back")

// show renders values: nil as <nil>, an empty value as "", others as they are.
func show(vals [][]byte) string {
	s := ""
	for i, v := range vals {
		if i > 0 {
			s += " "
		}
		switch {
		case v == nil:
			s += "<nil>"
		case len(v) == 0:
			s += `""`
		default:
			s += string(v)
		}
	}
	return s
}
