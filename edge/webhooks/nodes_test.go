package webhooks_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/edge/edgetest/storetest"
	"github.com/gatehouse-dev/gatehouse/edge/egress"
	"github.com/gatehouse-dev/gatehouse/edge/store"
	"github.com/gatehouse-dev/gatehouse/edge/tenancy"
	"github.com/gatehouse-dev/gatehouse/edge/webhooks"
)

// counter is a receiver that answers 200 and counts the requests per webhook-id.
type counter struct {
	mu   sync.Mutex
	seen map[string]int
	// all is closed once want distinct deliveries arrived.
	want int
	all  chan struct{}
}

func newCounter(t *testing.T, want int) (*counter, string) {
	c := &counter{seen: map[string]int{}, want: want, all: make(chan struct{})}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.mu.Lock()
		c.seen[r.Header.Get("webhook-id")]++
		if len(c.seen) == c.want && c.seen[r.Header.Get("webhook-id")] == 1 {
			close(c.all)
		}
		c.mu.Unlock()
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(srv.Close)
	return c, srv.URL
}

func (c *counter) await(t *testing.T) {
	t.Helper()
	select {
	case <-c.all:
	case <-time.After(30 * time.Second):
		c.mu.Lock()
		defer c.mu.Unlock()
		t.Fatalf("the receiver got %d of %d deliveries", len(c.seen), c.want)
	}
}

// awaitSettled waits until no delivery is queued or leased any more (every attempt's outcome
// recorded).
func awaitSettled(t *testing.T, db *store.DB) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		busy := false
		err := db.View(context.Background(), func(txn *store.Txn) error {
			for _, p := range []string{"webhooks/q/", "webhooks/l/"} {
				if err := txn.Iterate(store.IterOptions{Prefix: []byte(p), KeysOnly: true}, func(_, _ []byte) (bool, error) {
					busy = true
					return false, nil
				}); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if !busy {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("deliveries still queued or leased after every one reached the receiver")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// hookNode is one gateway's webhooks over a shared store.
type hookNode struct {
	svc *webhooks.Service
	w   *webhooks.Worker
}

func newHookNode(t *testing.T, db *store.DB, id, document string, now func() time.Time, ttl time.Duration) *hookNode {
	t.Helper()
	ten, err := tenancy.NewService(tenancy.Options{DB: db})
	if err != nil {
		t.Fatal(err)
	}
	svc, err := webhooks.NewService(webhooks.Options{DB: db, Egress: egress.New(egress.Options{AllowPrivateNetworks: true}), Now: now})
	if err != nil {
		t.Fatal(err)
	}
	if err := ten.Add(svc); err != nil {
		t.Fatal(err)
	}
	if document != "" {
		applyDoc(t, ten, document)
	}
	w := svc.NewWorker(webhooks.WorkerOptions{PollInterval: 5 * time.Millisecond, BaseBackoff: 10 * time.Millisecond, Node: id, Shared: true, LeaseTTL: ttl})
	return &hookNode{svc: svc, w: w}
}

func (n *hookNode) start(t *testing.T) {
	t.Helper()
	if err := n.w.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = n.w.Stop(context.Background()) })
}

func emitOn(t *testing.T, db *store.DB, svc *webhooks.Service, evs ...webhooks.Event) {
	t.Helper()
	err := db.Update(context.Background(), func(txn *store.Txn) error {
		for _, ev := range evs {
			if err := svc.Enqueue(context.Background(), txn, ev); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// Two nodes share one store, each with a worker; events are queued through both. Every
// delivery reaches the receiver exactly once.
func TestNodesDeliverEachWebhookOnce(t *testing.T) {
	const batches, per = 20, 10
	for _, b := range storetest.Backends() {
		t.Run(b, func(t *testing.T) {
			db := storetest.OpenBackend(t, b)
			c, url := newCounter(t, batches*per)
			nodes := []*hookNode{
				newHookNode(t, db, "a", doc(url, secret, "form.submitted"), nil, 0),
				newHookNode(t, db, "b", "", nil, 0),
			}
			for _, n := range nodes {
				n.start(t)
			}
			for i := 0; i < batches; i++ {
				evs := make([]webhooks.Event, per)
				for j := range evs {
					evs[j] = webhooks.Event{Type: "form.submitted", Project: "site", Data: map[string]any{"n": i*per + j}}
				}
				emitOn(t, db, nodes[i%2].svc, evs...)
			}
			c.await(t)
			// Stop lets the attempts in flight record their outcome (none is released to the
			// other node, TestStopLetsAttemptInFlightFinish); an attempt sent twice has reached
			// the receiver by the time both returned.
			for _, n := range nodes {
				if err := n.w.Stop(context.Background()); err != nil {
					t.Fatal(err)
				}
			}
			awaitSettled(t, db)
			c.mu.Lock()
			defer c.mu.Unlock()
			for id, k := range c.seen {
				if k != 1 {
					t.Errorf("delivery %s reached the receiver %d times, want once", id, k)
				}
			}
		})
	}
}

// A node claims deliveries and dies: the other node takes them over once their leases run out,
// not before, and delivers each once.
func TestExpiredWebhookLeaseTakenOver(t *testing.T) {
	const n, ttl = 5, time.Minute
	for _, b := range storetest.Backends() {
		t.Run(b, func(t *testing.T) {
			db := storetest.OpenBackend(t, b)
			c, url := newCounter(t, n)
			clk := &clock{t: time.Now()}
			dead := newHookNode(t, db, "a", doc(url, secret, "form.submitted"), clk.now, ttl)
			for i := 0; i < n; i++ {
				emitOn(t, db, dead.svc, webhooks.Event{Type: "form.submitted", Project: "site", Data: map[string]any{"n": i}})
			}
			if got, err := webhooks.ClaimForTest(dead.w, n); err != nil || got != n {
				t.Fatalf("the first node claimed %d, %v; want %d", got, err, n)
			}
			survivor := newHookNode(t, db, "b", "", clk.now, ttl)
			if got, err := webhooks.ClaimForTest(survivor.w, n); err != nil || got != 0 {
				t.Fatalf("claim while the leases are live = %d, %v; want 0", got, err)
			}
			clk.add(ttl + time.Second)
			survivor.start(t)
			c.await(t)
			_ = survivor.w.Stop(context.Background())
			c.mu.Lock()
			defer c.mu.Unlock()
			for id, k := range c.seen {
				if k != 1 {
					t.Errorf("delivery %s reached the receiver %d times, want once", id, k)
				}
			}
		})
	}
}

// clock is a settable test clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}
