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

// Stop called while a delivery is in flight (the SMTP server holds its DATA answer) claims
// nothing more, releases what it claimed but did not start, and lets the delivery finish and
// record its outcome; the second node, running all along, delivers the released messages.
// Every message reaches the server once, in one attempt.
func TestStopLetsDeliveryInFlightFinish(t *testing.T) {
	const n = 4
	for _, b := range storetest.Backends() {
		t.Run(b, func(t *testing.T) {
			db := storetest.OpenBackend(t, b)
			srv := smtptest.Start(t, nil)
			arrived, release := srv.Hold()
			t.Cleanup(release)
			a := newNode(t, db, "a", srv, nil, true, email.WorkerOptions{Concurrency: 1})
			other := newNode(t, db, "b", srv, nil, false, email.WorkerOptions{Concurrency: 1})
			ids := make([]string, n)
			for i := range ids {
				rc, err := a.svc.Send(context.Background(), demo, "", inlineReq(fmt.Sprintf("r%d@example.com", i)))
				if err != nil {
					t.Fatal(err)
				}
				ids[i] = rc.ID
			}
			a.start(t)
			select {
			case <-arrived:
			case <-time.After(30 * time.Second):
				t.Fatal("no message reached the server")
			}
			other.start(t)

			stopped := make(chan error, 1)
			go func() {
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				stopped <- a.w.Stop(ctx)
			}()
			for !email.Stopping(a.w) {
				time.Sleep(time.Millisecond)
			}
			select {
			case err := <-stopped:
				t.Fatalf("Stop returned (%v) while a delivery was in flight", err)
			default:
			}
			release()
			if err := <-stopped; err != nil {
				t.Fatalf("Stop = %v, want nil (the delivery ended within the timeout)", err)
			}
			awaitDelivered(t, other.svc, ids)
			got := copies(t, srv)
			for _, id := range ids {
				if got[id] != 1 {
					t.Errorf("message %s reached the server %d times, want once", id, got[id])
				}
				m, err := other.svc.Get(context.Background(), id)
				if err != nil {
					t.Fatal(err)
				}
				if m.Attempts != 1 {
					t.Errorf("message %s: %d attempts, want 1; log %+v", id, m.Attempts, m.Log)
				}
			}
		})
	}
}
