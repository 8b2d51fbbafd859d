package webhooks

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/gatehouse-dev/gatehouse/edge/apitime"
	"github.com/gatehouse-dev/gatehouse/edge/egress"
	"github.com/gatehouse-dev/gatehouse/edge/lease"
	"github.com/gatehouse-dev/gatehouse/edge/store"
)

// Retry schedule: the n-th failure waits BaseBackoff·2^(n-1), capped at MaxBackoff, of which a
// random half is jitter; a delivery is retried until MaxAge after its event.
const (
	BaseBackoff = 30 * time.Second
	MaxBackoff  = time.Hour
	MaxAge      = 24 * time.Hour
)

// Attempt is one delivery attempt, as GET .../webhooks/{name}/deliveries lists it.
type Attempt struct {
	// ID orders the log (newest first); DeliveryID is the webhook-id the receiver saw.
	ID         string `json:"id"`
	DeliveryID string `json:"deliveryId"`
	Event      string `json:"event"`
	Attempt    int    `json:"attempt"`
	At         string `json:"at"`
	// StatusCode is the receiver's HTTP status, 0 when no answer came (refused, timeout).
	StatusCode int   `json:"statusCode"`
	LatencyMs  int64 `json:"latencyMs"`
	// Outcome is succeeded, retrying (another attempt is scheduled) or failed (given up).
	Outcome       string `json:"outcome"`
	Error         string `json:"error,omitempty"`
	NextAttemptAt string `json:"nextAttemptAt,omitempty"`
}

// sign returns the webhook-signature header: one v1 signature per secret, space-separated
// (the current secret, and the replaced one during its rotation grace period).
func sign(secrets []string, id string, at time.Time, payload []byte) (string, error) {
	sigs := make([]string, 0, len(secrets))
	for _, sec := range secrets {
		wh, err := standardwebhooks.NewWebhook(sec)
		if err != nil {
			return "", fmt.Errorf("webhooks: secret: %w", err)
		}
		sig, err := wh.Sign(id, at, payload)
		if err != nil {
			return "", err
		}
		sigs = append(sigs, sig)
	}
	return strings.Join(sigs, " "), nil
}

// result is what one HTTP attempt produced.
type result struct {
	status  int
	latency time.Duration
	err     error
}

func (r result) ok() bool { return r.err == nil && r.status >= 200 && r.status < 300 }

func (r result) detail() string {
	switch {
	case r.err != nil:
		return r.err.Error()
	case !r.ok():
		return "the receiver answered " + strconv.Itoa(r.status)
	}
	return ""
}

// post sends one signed attempt of payload with id to the webhook.
func (s *Service) post(ctx context.Context, h StoredWebhook, id string, payload []byte) result {
	now := s.now()
	sig, err := sign(h.Secrets(now), id, now, payload)
	if err != nil {
		return result{err: err}
	}
	ctx, cancel := context.WithTimeout(ctx, s.egress.Timeout())
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.URL, bytes.NewReader(payload))
	if err != nil {
		return result{err: err}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "Gatehouse-Webhooks/1")
	req.Header.Set(standardwebhooks.HeaderWebhookID, id)
	req.Header.Set(standardwebhooks.HeaderWebhookTimestamp, strconv.FormatInt(now.Unix(), 10))
	req.Header.Set(standardwebhooks.HeaderWebhookSignature, sig)
	start := time.Now()
	resp, err := s.client.Do(req)
	if err != nil {
		return result{err: cleanErr(err), latency: time.Since(start)}
	}
	// Read (a capped part of) the answer so the connection can be reused; its content is not kept.
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, s.egress.MaxResponseBytes()))
	resp.Body.Close()
	return result{status: resp.StatusCode, latency: time.Since(start)}
}

// cleanErr shortens a client error for the deliveries log (the refused address stays visible).
func cleanErr(err error) error {
	if errors.Is(err, egress.ErrRefused) {
		return fmt.Errorf("refused by the egress policy: %w", err)
	}
	return err
}

// backoff is the wait after the n-th failed attempt: base·2^(n-1), capped at MaxBackoff, of
// which a random half is jitter.
func backoff(base time.Duration, n int) time.Duration {
	d := base << min(n-1, 20)
	if d <= 0 || d > MaxBackoff {
		d = MaxBackoff
	}
	return d/2 + rand.N(d/2+1)
}

// attempt delivers d once under the lease of holder and records the outcome; base is the
// backoff base (BaseBackoff, or a shorter one in tests). It reports false when it recorded
// nothing (cut short by the end of the shutdown timeout, or the webhook could not be read).
func (s *Service) attempt(ctx context.Context, d Delivery, holder string, base time.Duration) bool {
	h, err := s.hook(ctx, d.Project, d.Webhook)
	var r result
	switch {
	case errors.Is(err, ErrNotFound):
		r = result{err: errors.New("the webhook was removed from the tenants document")}
	case err != nil:
		s.log.Warn("webhooks: reading a webhook failed; retrying later", "project", d.Project, "webhook", d.Webhook, "err", err)
		return false
	case !h.Subscribes(d.Type):
		r = result{err: errors.New("the webhook no longer subscribes to " + d.Type)}
	default:
		r = s.post(ctx, h, d.ID, d.Body)
	}
	gone := err != nil || !h.Subscribes(d.Type)
	if ctx.Err() != nil && !r.ok() {
		return false // cut short by the shutdown timeout: the delivery is released, due again at once
	}
	s.record(d, holder, r, gone, base)
	return true
}

// errLeaseLost reports an attempt whose lease ran out and was taken by another claim.
var errLeaseLost = errors.New("webhooks: the delivery's lease ran out and another node holds it")

// record writes an attempt's outcome and the delivery's next state in one transaction, and
// ends the lease of holder ("" for none). An attempt whose lease another claim took over
// records nothing: that claim attempts and records the delivery itself.
func (s *Service) record(d Delivery, holder string, r result, gone bool, base time.Duration) {
	u := strings.TrimPrefix(d.ID, "msg_")
	now := s.now()
	err := s.db.Update(context.Background(), func(txn *store.Txn) error {
		if holder != "" {
			lk := leaseKey(d.Project, d.Webhook, u)
			l, ok, err := lease.Read(txn, lk)
			if err != nil {
				return err
			}
			if !ok || l.Holder != holder {
				return errLeaseLost
			}
			if err := txn.Delete(lk); err != nil {
				return err
			}
		}
		raw, err := txn.Get(deliveryKey(d.Project, d.Webhook, u))
		if err != nil {
			return err
		}
		var cur Delivery
		if err := json.Unmarshal(raw, &cur); err != nil {
			return err
		}
		if cur.Status != StatusPending {
			return nil
		}
		prevDue := cur.Due
		cur.Attempts++
		a := Attempt{ID: store.NewID(), DeliveryID: cur.ID, Event: cur.Type, Attempt: cur.Attempts,
			At: now.UTC().Format(apitime.Layout), StatusCode: r.status, LatencyMs: r.latency.Milliseconds(), Error: r.detail()}
		deadline := cur.CreatedAt.Add(MaxAge)
		switch {
		case r.ok():
			cur.Status, a.Outcome = StatusSucceeded, StatusSucceeded
		case gone || !now.Before(deadline):
			cur.Status, a.Outcome = StatusFailed, StatusFailed
		default:
			next := now.Add(backoff(base, cur.Attempts))
			if next.After(deadline) {
				next = deadline
			}
			cur.Due = next.UnixNano()
			a.Outcome, a.NextAttemptAt = "retrying", next.UTC().Format(apitime.Layout)
		}
		ar, err := json.Marshal(a)
		if err != nil {
			return err
		}
		if err := txn.Set(attemptKey(cur.Project, cur.Webhook, a.ID), ar); err != nil {
			return err
		}
		return s.put(txn, &cur, prevDue)
	})
	if errors.Is(err, errLeaseLost) {
		s.log.Warn("webhooks: an attempt outlived its lease; another node delivers it", "id", d.ID)
		return
	}
	if err != nil {
		s.log.Error("webhooks: recording an attempt failed; the delivery is attempted again", "id", d.ID, "err", err)
		return
	}
	s.m.observe(d.Type, r, gone)
}
