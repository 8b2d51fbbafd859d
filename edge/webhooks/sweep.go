package webhooks

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"time"

	"github.com/oklog/ulid/v2"

	"github.com/gatehouse-dev/gatehouse/edge/store"
)

// Retention is how long the deliveries log keeps an attempt, and the store a delivery that
// ended (succeeded or failed); pending deliveries are never swept.
const Retention = 7 * 24 * time.Hour

// sweepBatch bounds the deletions of one transaction.
const sweepBatch = 1000

// sweep deletes the attempts and the ended deliveries created before cutoff. It returns how
// many entries it deleted.
func (s *Service) sweep(ctx context.Context, cutoff time.Time) (int, error) {
	total := 0
	for _, kind := range []string{"a", "d"} {
		for {
			var doomed [][]byte
			err := s.db.View(ctx, func(txn *store.Txn) error {
				return txn.Iterate(store.IterOptions{Prefix: store.Prefix(root, kind), KeysOnly: kind == "a"}, func(k, v []byte) (bool, error) {
					id, err := ulid.Parse(strings.ToUpper(store.LastPart(k)))
					if err != nil || !ulid.Time(id.Time()).Before(cutoff) {
						return true, nil
					}
					if kind == "d" {
						var d Delivery
						if json.Unmarshal(v, &d) != nil || d.Status == StatusPending {
							return true, nil
						}
					}
					doomed = append(doomed, bytes.Clone(k))
					return len(doomed) < sweepBatch, nil
				})
			})
			if err != nil || len(doomed) == 0 {
				if err != nil {
					return total, err
				}
				break
			}
			err = s.db.Update(ctx, func(txn *store.Txn) error {
				for _, k := range doomed {
					if err := txn.Delete(k); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				return total, err
			}
			total += len(doomed)
			if len(doomed) < sweepBatch {
				break
			}
		}
	}
	return total, nil
}
