package email_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/edge/edgetest/storetest"
	"github.com/gatehouse-dev/gatehouse/products/email"
	"github.com/gatehouse-dev/gatehouse/products/email/smtptest"
)

// The failure row "SMTP relay down" of docs/scale-out.md, on both backends with two nodes:
// sends while the relay refuses connections are accepted and stay queued, each attempted and
// deferred with backoff; once the relay is back on its address, every message is delivered,
// once, by one of the nodes.
func TestSMTPRelayDown(t *testing.T) {
	const n = 12
	for _, b := range storetest.Backends() {
		t.Run(b, func(t *testing.T) {
			db := storetest.OpenBackend(t, b)
			srv := smtptest.Start(t, nil)
			srv.Down()
			// A budget of attempts far above what the outage costs here; short waits.
			o := email.WorkerOptions{Concurrency: 2, MaxAttempts: 1000, BaseBackoff: 10 * time.Millisecond, MaxBackoff: 50 * time.Millisecond}
			nodes := []*node{newNode(t, db, "a", srv, nil, true, o), newNode(t, db, "b", srv, nil, false, o)}
			for _, nd := range nodes {
				nd.start(t)
			}
			ids := make([]string, n)
			for i := range ids {
				rc, err := nodes[i%2].svc.Send(context.Background(), demo, "", inlineReq(fmt.Sprintf("down%d@example.com", i)))
				if err != nil {
					t.Fatalf("Send with the relay down = %v, want it queued", err)
				}
				ids[i] = rc.ID
			}
			// Every message tried at least twice and still queued.
			deadline := time.Now().Add(30 * time.Second)
			for _, id := range ids {
				for {
					m, err := nodes[0].svc.Get(context.Background(), id)
					if err != nil {
						t.Fatal(err)
					}
					if m.Status != email.StatusQueued {
						t.Fatalf("message %s is %s with the relay down, want queued; log %+v", id, m.Status, m.Log)
					}
					if m.Attempts >= 2 {
						break
					}
					if time.Now().After(deadline) {
						t.Fatalf("message %s: %d attempts with the relay down, want at least 2", id, m.Attempts)
					}
					time.Sleep(2 * time.Millisecond)
				}
			}
			if got := srv.Len(); got != 0 {
				t.Fatalf("the relay that is down received %d messages", got)
			}
			srv.Up(t)
			awaitDelivered(t, nodes[1].svc, ids)
			got := copies(t, srv)
			for _, id := range ids {
				if got[id] != 1 {
					t.Errorf("message %s reached the relay %d times, want once", id, got[id])
				}
			}
			if len(got) != n {
				t.Errorf("the relay received %d distinct messages, want %d", len(got), n)
			}
		})
	}
}
