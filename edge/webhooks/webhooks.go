// Package webhooks delivers the events of decisions.md 8.3 (form.submitted, email.*,
// asset.completed) to the URLs a project lists under `webhooks:` in the tenants document,
// signed per the Standard Webhooks specification.
//
// Products never import this package: each declares the small interface it emits through,
// and the composition root adapts Service.Enqueue to it. Enqueue writes one delivery per
// subscribed webhook into the caller's store transaction, so an event is durable exactly when
// the state change it reports is (a crash between the two loses neither). The Worker then
// delivers at least once: a 2xx ends a delivery; anything else is retried with exponential
// backoff and jitter (first retry within a minute) for 24 hours. Deliveries that share an
// order key (an email message id) are attempted one at a time, oldest first, so a receiver
// sees a message's events in the order they happened.
//
// Key layout, below "webhooks/":
//
//	d/<project>/<hook>/<ulid>                delivery (JSON of Delivery), kept after it ends
//	q/<due ns, 20 digits>/<project>/<hook>/<ulid>   pending deliveries by due time
//	o/<project>/<hook>/<order>/<ulid>        pending deliveries per order key, oldest first
//	a/<project>/<hook>/<ulid>                one attempt (JSON of Attempt), the deliveries log
package webhooks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/gatehouse-dev/gatehouse/edge/apitime"
	"github.com/gatehouse-dev/gatehouse/edge/egress"
	"github.com/gatehouse-dev/gatehouse/edge/store"
	"github.com/gatehouse-dev/gatehouse/edge/tenancy"
	"github.com/gatehouse-dev/gatehouse/edge/tenantcache"
)

// Sentinel errors of the package.
var (
	// ErrNotFound reports an unknown project or webhook.
	ErrNotFound = errors.New("webhooks: no such webhook")
	// ErrBadEvent reports an event type outside Events.
	ErrBadEvent = errors.New("webhooks: unknown event type")
)

// Options configures NewService. DB and Egress are required.
type Options struct {
	DB *store.DB
	// Egress is the outbound policy every delivery connects through.
	Egress *egress.Policy
	// Now is the clock (time.Now when nil).
	Now func() time.Time
	Log *slog.Logger
	// Registerer receives the delivery metrics; nil for none.
	Registerer prometheus.Registerer
	// Tenancy checks projects and journals and announces the webhooks the admin API writes
	// (PutHook, DeleteHook); without it those refuse.
	Tenancy *tenancy.Service
}

// Service enqueues events and answers the admin reads; the Worker delivers.
type Service struct {
	db     *store.DB
	client *http.Client
	egress *egress.Policy
	now    func() time.Time
	log    *slog.Logger
	m      *metrics
	ten    *tenancy.Service

	// hooks caches each project's webhooks (generation-guarded; Changed drops stale entries).
	hooks *tenantcache.Cache[[]StoredWebhook]

	wake chan struct{}
}

// NewService returns the service; it starts nothing.
func NewService(o Options) (*Service, error) {
	if o.DB == nil || o.Egress == nil {
		return nil, errors.New("webhooks: DB and Egress are required")
	}
	s := &Service{db: o.DB, egress: o.Egress, client: o.Egress.Client(), now: o.Now, log: o.Log,
		m: newMetrics(o.Registerer), wake: make(chan struct{}, 1), ten: o.Tenancy}
	if s.now == nil {
		s.now = time.Now
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	s.hooks = tenantcache.New[[]StoredWebhook](4096, "webhook", "project")
	return s, nil
}

// projectHooks returns a project's webhooks through the cache.
func (s *Service) projectHooks(ctx context.Context, project string) ([]StoredWebhook, error) {
	return s.hooks.Get(ctx, project, "", func(ctx context.Context) ([]StoredWebhook, error) { return s.readHooks(ctx, project) })
}

// Event is one state change a product reports.
type Event struct {
	// Type is one of Events.
	Type string
	// Project is the project whose webhooks receive it.
	Project string
	// Order groups events that must arrive in order (an email message id); "" for none.
	Order string
	// At is when the change happened (the service's clock when zero).
	At time.Time
	// Data is the body's "data" member.
	Data any
}

// Delivery is one event bound for one webhook, as stored.
type Delivery struct {
	// ID is the webhook-id header: the same on every attempt, so receivers can deduplicate.
	ID        string          `json:"id"`
	Project   string          `json:"project"`
	Webhook   string          `json:"webhook"`
	Type      string          `json:"type"`
	Order     string          `json:"order,omitempty"`
	Body      json.RawMessage `json:"body"`
	CreatedAt time.Time       `json:"createdAt"`
	Due       int64           `json:"due"`
	Attempts  int             `json:"attempts"`
	// Status is pending, succeeded or failed.
	Status string `json:"status"`
}

// Delivery statuses.
const (
	StatusPending   = "pending"
	StatusSucceeded = "succeeded"
	StatusFailed    = "failed"
)

// body is the JSON every delivery carries (decisions.md 8.3).
type body struct {
	Type      string `json:"type"`
	Timestamp string `json:"timestamp"`
	Data      any    `json:"data"`
}

const root = "webhooks"

func deliveryKey(project, hook, u string) []byte { return store.Key(root, "d", project, hook, u) }
func queueKey(due int64, project, hook, u string) []byte {
	return store.Key(root, "q", fmt.Sprintf("%020d", due), project, hook, u)
}
func orderPrefix(project, hook, order string) []byte {
	return store.Prefix(root, "o", project, hook, orderPart(order))
}
func orderKey(project, hook, order, u string) []byte {
	return store.Key(root, "o", project, hook, orderPart(order), u)
}
func attemptPrefix(project, hook string) []byte { return store.Prefix(root, "a", project, hook) }
func attemptKey(project, hook, u string) []byte { return store.Key(root, "a", project, hook, u) }

// orderPart keeps an order key free of the key separator.
func orderPart(order string) string { return strings.ReplaceAll(order, string(store.Sep), "_") }

// Enqueue writes one pending delivery of ev for every webhook of ev.Project that subscribes to
// ev.Type, inside txn: the deliveries commit (or vanish) with the caller's own writes. It is
// Prepare and Write in one call.
func (s *Service) Enqueue(ctx context.Context, txn *store.Txn, ev Event) error {
	b, err := s.Prepare(ctx, ev)
	if err != nil {
		return err
	}
	return b.Write(txn)
}

// Batch is the deliveries of one event, prepared outside a transaction.
type Batch struct {
	s  *Service
	ds []Delivery
}

// Len is the number of deliveries in the batch (0 when no webhook subscribes).
func (b Batch) Len() int { return len(b.ds) }

// Prepare builds the deliveries of ev (one per subscribed webhook of its project, read through
// a cache: a project without webhooks costs a map lookup) without writing them.
func (s *Service) Prepare(ctx context.Context, ev Event) (Batch, error) {
	if !isEvent(ev.Type) {
		return Batch{}, fmt.Errorf("%w: %q", ErrBadEvent, ev.Type)
	}
	hooks, err := s.projectHooks(ctx, ev.Project)
	if err != nil {
		return Batch{}, fmt.Errorf("webhooks: read the project's webhooks: %w", err)
	}
	b := Batch{s: s}
	var raw []byte
	for _, h := range hooks {
		if !h.Subscribes(ev.Type) {
			continue
		}
		if raw == nil {
			at := ev.At
			if at.IsZero() {
				at = s.now()
			}
			if raw, err = json.Marshal(body{Type: ev.Type, Timestamp: at.UTC().Format(apitime.Layout), Data: ev.Data}); err != nil {
				return Batch{}, fmt.Errorf("webhooks: encode %s event: %w", ev.Type, err)
			}
		}
		b.ds = append(b.ds, Delivery{Project: ev.Project, Webhook: h.Name, Type: ev.Type, Order: ev.Order, Body: raw, Status: StatusPending})
	}
	return b, nil
}

// Write writes the batch's deliveries into txn, due now. Ids are taken here, in commit order,
// so deliveries sharing an order key keep the order of their transactions. It may run again
// when the store re-runs the transaction.
func (b Batch) Write(txn *store.Txn) error {
	if len(b.ds) == 0 {
		return nil
	}
	now := b.s.now()
	for _, d := range b.ds {
		u := store.NewID()
		d.ID, d.CreatedAt, d.Due = "msg_"+u, now.UTC(), now.UnixNano()
		if err := b.s.put(txn, &d, 0); err != nil {
			return err
		}
	}
	select {
	case b.s.wake <- struct{}{}:
	default:
	}
	return nil
}

func isEvent(t string) bool {
	return slices.Contains(Events, t)
}

// put writes d and keeps its queue and order entries in step with its status; prevDue is the
// due time of its current queue entry (0 for none).
func (s *Service) put(txn *store.Txn, d *Delivery, prevDue int64) error {
	u := strings.TrimPrefix(d.ID, "msg_")
	raw, err := json.Marshal(d)
	if err != nil {
		return err
	}
	if err := txn.Set(deliveryKey(d.Project, d.Webhook, u), raw); err != nil {
		return err
	}
	if prevDue != 0 && prevDue != d.Due || prevDue != 0 && d.Status != StatusPending {
		if err := txn.Delete(queueKey(prevDue, d.Project, d.Webhook, u)); err != nil {
			return err
		}
	}
	if d.Status != StatusPending {
		if d.Order != "" {
			return txn.Delete(orderKey(d.Project, d.Webhook, d.Order, u))
		}
		return nil
	}
	if prevDue != d.Due {
		if err := txn.Set(queueKey(d.Due, d.Project, d.Webhook, u), nil); err != nil {
			return err
		}
	}
	if d.Order != "" && prevDue == 0 {
		return txn.Set(orderKey(d.Project, d.Webhook, d.Order, u), nil)
	}
	return nil
}
