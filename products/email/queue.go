package email

import (
	"context"
	"encoding/json"
	"errors"
	"strings"

	"github.com/gatehouse-dev/gatehouse/edge/store"
)

// pending is one send waiting for the group commit.
type pending struct {
	m    *Message
	req  string // SHA-256 of the request, for Idempotency-Key reuse checks
	size int    // estimated stored bytes
	done chan result
}

type result struct {
	r   Receipt
	err error
}

// enqueue hands m to the group committer and waits for the durable commit that holds it.
func (s *Service) enqueue(ctx context.Context, m *Message, req string) (Receipt, error) {
	p := &pending{m: m, req: req, size: len(m.HTML) + len(m.Text) + len(m.Subject) + 512, done: make(chan result, 1)}
	s.closeMu.RLock()
	if s.closed {
		s.closeMu.RUnlock()
		return Receipt{}, ErrClosed
	}
	select {
	case s.in <- p:
	case <-ctx.Done():
		s.closeMu.RUnlock()
		return Receipt{}, ctx.Err()
	}
	s.closeMu.RUnlock()
	// Once handed over, the send is committed or refused as a whole batch: wait for it even if
	// the caller gives up, so an acknowledged id is never one that was not written.
	res := <-p.done
	return res.r, res.err
}

// commitLoop gathers the sends that arrive while a commit runs and writes them together in
// one transaction (one fsync with storage.sync_writes), then answers each.
func (s *Service) commitLoop() {
	defer close(s.done)
	batch := make([]*pending, 0, s.max)
	for {
		select {
		case p := <-s.in:
			batch = append(batch[:0], p)
		case <-s.quit:
			// Answer what is still waiting in the channel, then stop.
			for {
				select {
				case p := <-s.in:
					s.commit([]*pending{p})
				default:
					return
				}
			}
		}
		size := batch[0].size
	gather:
		for len(batch) < s.max && size < maxBatchBytes {
			select {
			case p := <-s.in:
				batch = append(batch, p)
				size += p.size
			default:
				break gather
			}
		}
		s.commit(batch)
	}
}

// commit writes a batch in one transaction. Idempotency keys are checked inside it, so two
// sends with the same key, in one batch or not, make one message.
//
// The batch's messages become due at the commit's time, which only grows from batch to batch:
// the worker relies on that to scan the queue from where it left off.
func (s *Service) commit(batch []*pending) {
	now := s.now()
	due := now.UnixNano()
	if due <= s.lastDue {
		due = s.lastDue + 1
	}
	s.lastDue = due
	raws := make([][]byte, len(batch))
	for i, p := range batch {
		p.m.Due = due
		raw, err := marshal(p.m)
		if err != nil {
			for _, p := range batch {
				p.done <- result{err: err}
			}
			return
		}
		raws[i] = raw
	}
	results := make([]result, len(batch))
	err := s.db.Update(context.Background(), func(txn *store.Txn) error {
		seen := map[string]idemEntry{}
		for i, p := range batch {
			results[i] = result{r: Receipt{ID: p.m.ID, Status: StatusQueued}}
			if k := p.m.IdempotencyKey; k != "" {
				ik := idemKey(p.m.Project, k)
				if e, ok := seen[string(ik)]; ok {
					results[i] = sameRequest(e.Req, p.req, Receipt{ID: e.ID, Status: StatusQueued})
					continue
				}
				first, req, err := s.firstSend(txn, ik, now.UnixNano())
				if err != nil {
					return err
				}
				if first != nil {
					results[i] = sameRequest(req, p.req, *first)
					continue
				}
				e := idemEntry{ID: p.m.ID, At: now.UnixNano(), Req: p.req}
				v, _ := json.Marshal(e)
				if err := txn.Set(ik, v); err != nil {
					return err
				}
				seen[string(ik)] = e
			}
			if err := insert(txn, p.m, raws[i]); err != nil {
				return err
			}
		}
		return nil
	})
	for i, p := range batch {
		if err != nil {
			p.done <- result{err: err}
			continue
		}
		p.done <- results[i]
	}
	if err == nil {
		s.metrics.committed(len(batch), len(batch)-len(seenDup(results, batch)))
		select {
		case s.wake <- struct{}{}:
		default:
		}
	} else {
		s.log.Error("email: queue commit failed", "sends", len(batch), "err", err)
	}
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

// seenDup returns the sends of a batch answered with an earlier message (Idempotency-Key).
func seenDup(results []result, batch []*pending) []int {
	var out []int
	for i, p := range batch {
		if results[i].r.ID != p.m.ID {
			out = append(out, i)
		}
	}
	return out
}
