package email

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/gatehouse-dev/gatehouse/edge/apitime"
	"github.com/gatehouse-dev/gatehouse/edge/store"
)

// Events is told of every status a message moves to (sent, delivered, bounced, spam,
// suppressed, failed), once per move and in order, inside the transaction that records the move:
// the composition root turns each into an email.<status> webhook event (decisions.md 8.3), and
// a crash loses neither the move nor its event.
type Events interface {
	MessageMoved(ctx context.Context, txn *store.Txn, m *Message, to Status, at time.Time) error
}

// persist is save plus one Events call for each status m moved through since prev.
func (s *Service) persist(ctx context.Context, txn *store.Txn, m *Message, prev Status, prevDue int64) error {
	if err := save(txn, m, prev, prevDue); err != nil {
		return err
	}
	if s.events == nil || prev == m.Status {
		return nil
	}
	for _, e := range moves(m, prev) {
		at, _ := time.Parse(apitime.Layout, e.At)
		if err := s.events.MessageMoved(ctx, txn, m, e.Status, at); err != nil {
			return err
		}
	}
	return nil
}

// moves returns the log entries that moved m's status since it was prev, oldest first (a
// delivery moves queued → sent → delivered in one write).
func moves(m *Message, prev Status) []LogEntry {
	var out []LogEntry
	for i := len(m.Log) - 1; i > 0; i-- {
		if m.Log[i].Status == m.Log[i-1].Status {
			continue
		}
		out = append([]LogEntry{m.Log[i]}, out...)
		if m.Log[i-1].Status == prev {
			break
		}
	}
	return out
}

// Prepared is a message built by Prepare, to be queued inside a caller's transaction.
type Prepared struct {
	s *Service
	m *Message
}

// Prepare builds a message for project like Send does (the project's sender, a template or an
// inline body, tags, metadata, then the SendHook: the project's email.send plugins see, rewrite
// or refuse it like an API send) without queuing it: Queue writes it inside the caller's
// transaction, so the form notifications of decisions.md 8.3 commit with their submission and
// the transaction only does the writes. The request's tags stay through a plugin's rewrite of
// the tags (a plugin may add tags, not drop the gateway's own markers such as
// form-notification). The suppression list applies at delivery like for every message.
func (s *Service) Prepare(ctx context.Context, projectID string, req SendRequest) (*Prepared, error) {
	p, err := s.readProject(ctx, projectID)
	if err != nil {
		return nil, err
	}
	if !p.ok {
		return nil, ErrProjectNotFound
	}
	m, vars, err := s.build(ctx, p.v, req)
	if err != nil {
		return nil, err
	}
	if err := s.filter(ctx, projectID, m, vars); err != nil {
		return nil, err
	}
	m.Tags = dedupeTags(append(m.Tags, req.Tags...))
	return &Prepared{s: s, m: m}, nil
}

// ID is the prepared message's id.
func (p *Prepared) ID() string { return p.m.ID }

// Queue writes the message into txn with its queue entry, due at the transaction's time (see
// enqueue). It may run again when the store re-runs the transaction.
func (p *Prepared) Queue(txn *store.Txn) error {
	s, m := p.s, *p.m
	m.Due = s.now().UnixNano()
	raw, err := json.Marshal(&m)
	if err != nil {
		return fmt.Errorf("email: encode message: %w", err)
	}
	if err := insert(txn, &m, raw); err != nil {
		return err
	}
	// The worker also polls: a wake before the caller's commit only costs an empty scan.
	select {
	case s.wake <- struct{}{}:
	default:
	}
	return nil
}
