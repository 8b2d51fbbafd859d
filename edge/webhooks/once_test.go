package webhooks_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/edge/egress"
	"github.com/gatehouse-dev/gatehouse/edge/webhooks"
)

// A delivery its receiver answered 200 is not sent again: the queue scan reads a snapshot that
// may predate the commit of an attempt ending meanwhile, and must not start that delivery a
// second time. Many deliveries arrive while others are in flight; the receiver counts requests
// per webhook-id.
func TestAnsweredDeliveryNotSentAgain(t *testing.T) {
	const batches, per = 40, 25
	var mu sync.Mutex
	seen := map[string]int{}
	all := make(chan struct{})
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen[r.Header.Get("webhook-id")]++
		if len(seen) == batches*per && seen[r.Header.Get("webhook-id")] == 1 {
			close(all)
		}
		mu.Unlock()
		w.WriteHeader(http.StatusOK)
	}))
	defer rcv.Close()
	e := start(t, egress.Options{AllowPrivateNetworks: true}, doc(rcv.URL, secret, "form.submitted"))
	for b := 0; b < batches; b++ {
		evs := make([]webhooks.Event, per)
		for i := range evs {
			evs[i] = webhooks.Event{Type: "form.submitted", Project: "site", Data: map[string]any{"n": b*per + i}}
		}
		e.emit(t, evs...)
	}
	select {
	case <-all:
	case <-time.After(60 * time.Second):
		mu.Lock()
		t.Fatalf("the receiver got %d of %d events", len(seen), batches*per)
	}
	// Stop waits for the attempts in flight: a second attempt of any delivery started by now
	// has reached the receiver.
	if err := e.w.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	for id, n := range seen {
		if n > 1 {
			t.Errorf("delivery %s sent %d times, its first attempt answered 200", id, n)
		}
	}
}
