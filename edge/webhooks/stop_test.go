package webhooks_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/edge/edgetest/storetest"
	"github.com/gatehouse-dev/gatehouse/edge/webhooks"
)

// gate is a receiver that holds the first request of each delivery until the test opens it
// (or the sender gives up, which closes cut); later requests are answered 200 at once.
type gate struct {
	mu      sync.Mutex
	seen    map[string]int
	arrived chan string
	open    chan struct{}
	cut     chan struct{}
	openMu  sync.Once
	cutOnce sync.Once
}

func newGate(t *testing.T) (*gate, string) {
	g := &gate{seen: map[string]int{}, arrived: make(chan string, 16), open: make(chan struct{}), cut: make(chan struct{})}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get("webhook-id")
		// Reading the body to its end lets the server notice the sender hanging up (cut).
		_, _ = io.Copy(io.Discard, r.Body)
		g.mu.Lock()
		g.seen[id]++
		n := g.seen[id]
		g.mu.Unlock()
		g.arrived <- id
		if n == 1 {
			select {
			case <-g.open:
			case <-r.Context().Done():
				g.cutOnce.Do(func() { close(g.cut) })
				return
			}
		}
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(func() { g.release(); srv.Close() })
	return g, srv.URL
}

func (g *gate) release() { g.openMu.Do(func() { close(g.open) }) }

func (g *gate) next(t *testing.T) string {
	t.Helper()
	select {
	case id := <-g.arrived:
		return id
	case <-time.After(30 * time.Second):
		t.Fatal("no request reached the receiver")
		return ""
	}
}

func (g *gate) count(id string) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.seen[id]
}

// attemptsOf returns the deliveries log of the site/main webhook.
func attemptsOf(t *testing.T, svc *webhooks.Service) []webhooks.Attempt {
	t.Helper()
	got, _, err := svc.Attempts(context.Background(), "site", "main", "", 100)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// Stop called while an attempt is in flight (the receiver holds the request) claims nothing
// more but lets the attempt finish and record its outcome: the delivery is recorded once,
// succeeded, and the second node, running all along, never sends it again.
func TestStopLetsAttemptInFlightFinish(t *testing.T) {
	for _, b := range storetest.Backends() {
		t.Run(b, func(t *testing.T) {
			db := storetest.OpenBackend(t, b)
			g, url := newGate(t)
			a := newHookNode(t, db, "a", doc(url, secret, "form.submitted"), nil, 0)
			other := newHookNode(t, db, "b", "", nil, 0)
			a.start(t)
			emitOn(t, db, a.svc, webhooks.Event{Type: "form.submitted", Project: "site", Data: map[string]any{"n": 1}})
			id := g.next(t)
			other.start(t)

			stopped := make(chan error, 1)
			go func() {
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				stopped <- a.w.Stop(ctx)
			}()
			<-webhooks.LoopEnded(a.w) // Stop has begun: a claims nothing more
			select {
			case err := <-stopped:
				t.Fatalf("Stop returned (%v) while an attempt was in flight", err)
			case <-g.cut:
				t.Fatal("Stop cut the attempt in flight short")
			default:
			}
			g.release()
			if err := <-stopped; err != nil {
				t.Fatalf("Stop = %v, want nil (the attempt ended within the timeout)", err)
			}
			// The outcome is recorded by the time Stop returns: nothing queued or leased.
			awaitSettled(t, db)
			if err := other.w.Stop(context.Background()); err != nil {
				t.Fatal(err)
			}
			if n := g.count(id); n != 1 {
				t.Errorf("delivery %s reached the receiver %d times, want once", id, n)
			}
			if got := attemptsOf(t, a.svc); len(got) != 1 || got[0].Outcome != webhooks.StatusSucceeded || got[0].DeliveryID != id {
				t.Errorf("deliveries log = %+v, want one succeeded attempt of %s", got, id)
			}
		})
	}
}

// Stop whose timeout ends before the attempt in flight cuts it short and releases the
// delivery, due again at once: another node delivers it (the receiver sees it a second time,
// at least once), and the log holds that node's single succeeded attempt.
func TestStopTimeoutReleasesAttempt(t *testing.T) {
	for _, b := range storetest.Backends() {
		t.Run(b, func(t *testing.T) {
			db := storetest.OpenBackend(t, b)
			g, url := newGate(t)
			a := newHookNode(t, db, "a", doc(url, secret, "form.submitted"), nil, 0)
			other := newHookNode(t, db, "b", "", nil, 0)
			a.start(t)
			emitOn(t, db, a.svc, webhooks.Event{Type: "form.submitted", Project: "site", Data: map[string]any{"n": 1}})
			id := g.next(t)

			ctx, cancel := context.WithCancel(context.Background())
			cancel() // the shutdown timeout is over already
			if err := a.w.Stop(ctx); !errors.Is(err, context.Canceled) {
				t.Fatalf("Stop with an ended timeout = %v, want context.Canceled", err)
			}
			select {
			case <-g.cut:
			case <-time.After(30 * time.Second):
				t.Fatal("the attempt in flight was not cut short")
			}
			other.start(t)
			if again := g.next(t); again != id {
				t.Fatalf("the second node sent %s, want the released %s", again, id)
			}
			awaitSettled(t, db)
			if got := attemptsOf(t, a.svc); len(got) != 1 || got[0].Outcome != webhooks.StatusSucceeded || got[0].DeliveryID != id {
				t.Errorf("deliveries log = %+v, want the second node's one succeeded attempt of %s", got, id)
			}
		})
	}
}
