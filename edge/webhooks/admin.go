package webhooks

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/gatehouse-dev/gatehouse/edge/apitime"
	"github.com/gatehouse-dev/gatehouse/edge/store"
)

// Attempts lists a webhook's delivery attempts newest first, limit per page, after the
// attempt id after ("" for the first page); next is the id to continue after ("" at the end).
func (s *Service) Attempts(ctx context.Context, project, name, after string, limit int) (items []Attempt, next string, err error) {
	if _, err := s.hook(ctx, project, name); err != nil {
		return nil, "", err
	}
	p := attemptPrefix(project, name)
	o := store.IterOptions{Prefix: p, Reverse: true}
	if after != "" {
		o.Start = attemptKey(project, name, after)
	}
	err = s.db.View(ctx, func(txn *store.Txn) error {
		return txn.Iterate(o, func(k, v []byte) (bool, error) {
			if after != "" && store.LastPart(k) == after {
				return true, nil
			}
			if len(items) == limit {
				next = items[len(items)-1].ID
				return false, nil
			}
			var a Attempt
			if err := json.Unmarshal(v, &a); err != nil {
				return false, fmt.Errorf("webhooks: decode attempt %s: %w", k, err)
			}
			items = append(items, a)
			return true, nil
		})
	})
	return items, next, err
}

// PingResult is the answer of POST .../webhooks/{name}/test.
type PingResult struct {
	ID         string `json:"id"`
	OK         bool   `json:"ok"`
	StatusCode int    `json:"statusCode"`
	LatencyMs  int64  `json:"latencyMs"`
	Error      string `json:"error,omitempty"`
}

// Ping sends one signed `ping` event to a webhook now, whatever its events, and records the
// attempt in its deliveries log. It is not retried.
func (s *Service) Ping(ctx context.Context, project, name string) (PingResult, error) {
	h, err := s.hook(ctx, project, name)
	if err != nil {
		return PingResult{}, err
	}
	now := s.now()
	u := store.NewID()
	raw, err := json.Marshal(body{Type: "ping", Timestamp: now.UTC().Format(apitime.Layout),
		Data: map[string]string{"project": project, "webhook": name}})
	if err != nil {
		return PingResult{}, err
	}
	r := s.post(ctx, h, "msg_"+u, raw)
	a := Attempt{ID: store.NewID(), DeliveryID: "msg_" + u, Event: "ping", Attempt: 1, At: now.UTC().Format(apitime.Layout),
		StatusCode: r.status, LatencyMs: r.latency.Milliseconds(), Error: r.detail(), Outcome: StatusSucceeded}
	if !r.ok() {
		a.Outcome = StatusFailed
	}
	ar, _ := json.Marshal(a)
	if err := s.db.Update(ctx, func(txn *store.Txn) error { return txn.Set(attemptKey(project, name, a.ID), ar) }); err != nil {
		return PingResult{}, err
	}
	s.m.observe("ping", r, false)
	return PingResult{ID: a.DeliveryID, OK: r.ok(), StatusCode: r.status, LatencyMs: a.LatencyMs, Error: a.Error}, nil
}
