package store

import (
	"context"
	"fmt"
	"testing"
)

// TestStageOverwrites: an Update that writes keys again, while its stage finds keys by
// comparing them (few writes) and after it indexed them (more than stageScan), reads its last
// writes back, scans each key once, and commits one value per key: the last.
func TestStageOverwrites(t *testing.T) {
	for _, n := range []int{3, stageScan, stageScan + 1, 3 * stageScan} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			eachBackend(t, func(t *testing.T, b testBackend) {
				ctx := context.Background()
				db := b.open(t, Options{})
				key := func(i int) []byte { return Key("t", "s", fmt.Sprintf("k%03d", i)) }
				err := db.Update(ctx, func(tx *Txn) error {
					// Each key three times: set, deleted (odd ones set again), set again.
					for round := range 3 {
						for i := range n {
							var err error
							switch {
							case round == 1 && i%2 == 0:
								err = tx.Delete(key(i))
							default:
								err = tx.Set(key(i), []byte(fmt.Sprintf("v%d-%d", round, i)))
							}
							if err != nil {
								return err
							}
						}
						if round == 1 && n > 1 {
							// Between rounds: the deleted key reads as absent, the other as rewritten.
							if _, err := tx.Get(key(0)); err == nil {
								t.Errorf("Get(k000) after its delete: found")
							}
							if v, err := tx.Get(key(1)); err != nil || string(v) != "v1-1" {
								t.Errorf("Get(k001) = %q, %v; want v1-1", v, err)
							}
						}
					}
					seen := 0
					err := tx.Iterate(IterOptions{Prefix: Prefix("t", "s")}, func(k, v []byte) (bool, error) {
						if want := fmt.Sprintf("v2-%d", seen); string(k) != string(key(seen)) || string(v) != want {
							t.Errorf("scan %d in the Update: %s=%q, want %s=%s", seen, k, v, key(seen), want)
						}
						seen++
						return true, nil
					})
					if seen != n {
						t.Errorf("the Update scanned %d keys, want %d", seen, n)
					}
					return err
				})
				if err != nil {
					t.Fatal(err)
				}
				seen := 0
				err = db.View(ctx, func(tx *Txn) error {
					return tx.Iterate(IterOptions{Prefix: Prefix("t", "s")}, func(k, v []byte) (bool, error) {
						if want := fmt.Sprintf("v2-%d", seen); string(v) != want {
							t.Errorf("stored %s=%q, want %s", k, v, want)
						}
						seen++
						return true, nil
					})
				})
				if err != nil || seen != n {
					t.Errorf("stored %d keys (%v), want %d", seen, err, n)
				}
			})
		})
	}
}
