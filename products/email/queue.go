package email

import (
	"context"
	"encoding/json"
	"errors"
	"strings"

	"github.com/gatehouse-dev/gatehouse/edge/store"
)

// enqueue writes m durably through the store's group committer (many concurrent sends share
// one commit and its fsync) and answers only after that commit. The Idempotency-Key is checked
// inside the transaction, so two sends with the same key, concurrent or not, make one message.
//
// A message becomes due at its transaction's time. Due times need not grow in commit order
// (other nodes, concurrent transactions on a shared database): the worker's queue scan looks
// back far enough for that (Worker.claim).
func (s *Service) enqueue(ctx context.Context, m *Message, req string) (Receipt, error) {
	// Close waits for the sends in flight, then refuses new ones.
	s.closeMu.RLock()
	defer s.closeMu.RUnlock()
	if s.closed {
		return Receipt{}, ErrClosed
	}
	var res result
	err := s.db.Update(ctx, func(txn *store.Txn) error {
		now := s.now()
		m.Due = now.UnixNano()
		res = result{r: Receipt{ID: m.ID, Status: StatusQueued}}
		if k := m.IdempotencyKey; k != "" {
			ik := idemKey(m.Project, k)
			first, firstReq, err := s.firstSend(txn, ik, now.UnixNano())
			if err != nil {
				return err
			}
			if first != nil {
				res = sameRequest(firstReq, req, *first)
				return nil
			}
			v, _ := json.Marshal(idemEntry{ID: m.ID, At: now.UnixNano(), Req: req})
			if err := txn.Set(ik, v); err != nil {
				return err
			}
		}
		raw, err := marshal(m)
		if err != nil {
			return err
		}
		return insert(txn, m, raw)
	})
	if err != nil {
		s.log.Error("email: queue commit failed", "id", m.ID, "err", err)
		return Receipt{}, err
	}
	if res.err == nil && res.r.ID == m.ID {
		s.metrics.committed()
		select {
		case s.wake <- struct{}{}:
		default:
		}
	}
	return res.r, res.err
}

type result struct {
	r   Receipt
	err error
}

// firstSend returns the receipt of the message an Idempotency-Key already made within the
// window and the fingerprint of its request, or a nil receipt.
func (s *Service) firstSend(txn *store.Txn, ik []byte, now int64) (*Receipt, string, error) {
	raw, err := txn.Get(ik)
	if errors.Is(err, store.ErrNotFound) {
		return nil, "", nil
	}
	if err != nil {
		return nil, "", err
	}
	var e idemEntry
	if json.Unmarshal(raw, &e) != nil || now-e.At > int64(IdempotencyWindow) {
		return nil, "", nil
	}
	m, err := load(txn, strings.TrimPrefix(e.ID, idPrefix))
	if errors.Is(err, ErrMessageNotFound) {
		return nil, "", nil
	}
	if err != nil {
		return nil, "", err
	}
	return &Receipt{ID: m.ID, Status: m.Status}, e.Req, nil
}

// sameRequest answers a repeated Idempotency-Key: the first message when the request is the
// same, ErrIdempotencyReused when it differs.
func sameRequest(first, again string, r Receipt) result {
	if first != "" && again != "" && first != again {
		return result{err: ErrIdempotencyReused}
	}
	return result{r: r}
}
