package records

import (
	"context"

	"github.com/gatehouse-dev/gatehouse/edge/store"
)

// WriteStripeForTest returns the counter stripe s writes (counters.go).
func WriteStripeForTest(s *Service) int { return s.writeStripe() }

// CountForTest reads a collection's published count as a list page does.
func CountForTest(s *Service, project, coll string) (n int64, err error) {
	err = s.db.View(context.Background(), func(txn *store.Txn) error {
		n, err = readCount(txn, project, coll)
		return err
	})
	return n, err
}
