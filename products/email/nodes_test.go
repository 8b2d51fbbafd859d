package email_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/edge/edgetest/storetest"
	"github.com/gatehouse-dev/gatehouse/edge/store"
	"github.com/gatehouse-dev/gatehouse/edge/tenancy"
	"github.com/gatehouse-dev/gatehouse/products/email"
	"github.com/gatehouse-dev/gatehouse/products/email/smtptest"
)

// node is one gateway's email product over a shared store: its own tenancy service, email
// service and (once started) worker.
type node struct {
	svc *email.Service
	w   *email.Worker
}

// newNode builds a node named id over db, delivering to srv. apply applies the test tenants
// through this node (once per store).
func newNode(t *testing.T, db *store.DB, id string, srv *smtptest.Server, now func() time.Time, apply bool, o email.WorkerOptions) *node {
	t.Helper()
	ten, err := tenancy.NewService(tenancy.Options{DB: db})
	if err != nil {
		t.Fatal(err)
	}
	svc, err := email.NewService(email.Options{DB: db, Tenancy: ten, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = svc.Close() })
	if err := ten.Add(svc); err != nil {
		t.Fatal(err)
	}
	if apply {
		doc, err := tenancy.Parse([]byte(tenants))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ten.Apply(context.Background(), doc); err != nil {
			t.Fatal(err)
		}
	}
	tr, err := email.NewSMTP(email.SMTPOptions{Host: srv.Host, Port: srv.Port, TLS: "none", HELO: id + ".gatehouse.test"})
	if err != nil {
		t.Fatal(err)
	}
	o.Transport, o.Node, o.Shared = tr, id, true
	if o.PollInterval == 0 {
		o.PollInterval = 5 * time.Millisecond
	}
	return &node{svc: svc, w: svc.NewWorker(o)}
}

func (n *node) start(t *testing.T) {
	t.Helper()
	if err := n.w.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := n.w.Stop(ctx); err != nil {
			t.Errorf("Worker.Stop: %v", err)
		}
	})
}

// awaitDelivered waits until every message in ids is delivered, reading through svc.
func awaitDelivered(t *testing.T, svc *email.Service, ids []string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for _, id := range ids {
		for {
			m, err := svc.Get(context.Background(), id)
			if err != nil {
				t.Fatalf("Get(%s): %v", id, err)
			}
			if m.Status == email.StatusDelivered {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("message %s is %s, want delivered; log %+v", id, m.Status, m.Log)
			}
			time.Sleep(2 * time.Millisecond)
		}
	}
}

// copies counts the copies the server received of each message id (X-Gatehouse-Message-Id)
// and checks that every copy carries the message's one Message-ID.
func copies(t *testing.T, srv *smtptest.Server) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, r := range srv.Messages() {
		id := r.Header().Get("X-Gatehouse-Message-Id")
		if want := "<" + strings.TrimPrefix(id, "msg_") + "@acme.test>"; r.Header().Get("Message-Id") != want {
			t.Errorf("copy of %s has Message-ID %q, want %q", id, r.Header().Get("Message-Id"), want)
		}
		out[id]++
	}
	return out
}

// Two nodes share one store, each with a worker; sends arrive through both. Every message is
// delivered exactly once by the two workers together.
func TestNodesDeliverEachMessageOnce(t *testing.T) {
	const n = 120
	for _, b := range storetest.Backends() {
		t.Run(b, func(t *testing.T) {
			db := storetest.OpenBackend(t, b)
			srv := smtptest.Start(t, nil)
			nodes := []*node{
				newNode(t, db, "a", srv, nil, true, email.WorkerOptions{Concurrency: 4}),
				newNode(t, db, "b", srv, nil, false, email.WorkerOptions{Concurrency: 4}),
			}
			for _, nd := range nodes {
				nd.start(t)
			}
			ids := make([]string, n)
			for i := range ids {
				rc, err := nodes[i%2].svc.Send(context.Background(), demo, "", inlineReq(fmt.Sprintf("r%d@example.com", i)))
				if err != nil {
					t.Fatal(err)
				}
				ids[i] = rc.ID
			}
			awaitDelivered(t, nodes[1].svc, ids)
			got := copies(t, srv)
			for _, id := range ids {
				if got[id] != 1 {
					t.Errorf("message %s reached the server %d times, want once", id, got[id])
				}
			}
			for i, id := range ids {
				m, err := nodes[i%2].svc.Get(context.Background(), id)
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

// A node claims messages and dies (its worker never records anything nor renews): the other
// node takes them over once their leases run out, not before, and delivers each; a message the
// dead node had already handed to the server arrives twice with the same Message-ID. A node
// restarted under the same id takes its own leases back at once.
func TestExpiredLeaseTakenOver(t *testing.T) {
	const n, ttl = 6, 30 * time.Second
	cases := []struct {
		name string
		// sent: the dead node handed the messages to the server before dying.
		sent bool
		// sameID: the survivor is the dead node restarted under its id.
		sameID bool
	}{
		{name: "claimed, not sent"},
		{name: "sent, outcome lost", sent: true},
		{name: "restart of the same node", sameID: true},
	}
	for _, b := range storetest.Backends() {
		for _, tc := range cases {
			t.Run(b+"/"+tc.name, func(t *testing.T) {
				db := storetest.OpenBackend(t, b)
				srv := smtptest.Start(t, nil)
				clk := &clock{t: time.Now()}
				o := email.WorkerOptions{Concurrency: 2, LeaseTTL: ttl}
				dead := newNode(t, db, "a", srv, clk.Now, true, o)
				var ids []string
				for i := 0; i < n; i++ {
					rc, err := dead.svc.Send(context.Background(), demo, "", inlineReq(fmt.Sprintf("r%d@example.com", i)))
					if err != nil {
						t.Fatal(err)
					}
					ids = append(ids, rc.ID)
				}
				if got, err := email.ClaimForTest(dead.w, n); err != nil || got != n {
					t.Fatalf("the first node claimed %d, %v; want %d", got, err, n)
				}
				if tc.sent {
					email.SendClaimedForTest(dead.w)
				}
				survivorID := "b"
				if tc.sameID {
					survivorID = "a"
				}
				survivor := newNode(t, db, survivorID, srv, clk.Now, false, o)
				if !tc.sameID {
					// The leases are live: nothing to claim yet.
					if got, err := email.ClaimForTest(survivor.w, n); err != nil || got != 0 {
						t.Fatalf("claim while the leases are live = %d, %v; want 0", got, err)
					}
					clk.Add(ttl + time.Second)
				}
				survivor.start(t)
				awaitDelivered(t, survivor.svc, ids)
				got := copies(t, srv)
				want := 1
				if tc.sent {
					want = 2
				}
				for _, id := range ids {
					if got[id] != want {
						t.Errorf("message %s reached the server %d times, want %d", id, got[id], want)
					}
					m, _ := survivor.svc.Get(context.Background(), id)
					requeued := false
					for _, e := range m.Log {
						requeued = requeued || e.Event == "requeued"
					}
					if !requeued || m.Attempts != 1 {
						t.Errorf("message %s: requeued %v, %d attempts; want a requeued entry and 1 attempt; log %+v", id, requeued, m.Attempts, m.Log)
					}
				}
			})
		}
	}
}

// A worker that renews its leases keeps its messages past the first expiry; once it stops
// renewing, another node takes them.
func TestLeaseRenewal(t *testing.T) {
	const ttl = 30 * time.Second
	for _, b := range storetest.Backends() {
		t.Run(b, func(t *testing.T) {
			db := storetest.OpenBackend(t, b)
			srv := smtptest.Start(t, nil)
			clk := &clock{t: time.Now()}
			o := email.WorkerOptions{LeaseTTL: ttl}
			a := newNode(t, db, "a", srv, clk.Now, true, o)
			other := newNode(t, db, "b", srv, clk.Now, false, o)
			if _, err := a.svc.Send(context.Background(), demo, "", inlineReq("slow@example.com")); err != nil {
				t.Fatal(err)
			}
			if got, err := email.ClaimForTest(a.w, 1); err != nil || got != 1 {
				t.Fatalf("claim = %d, %v; want 1", got, err)
			}
			steps := []struct {
				advance time.Duration
				renew   bool
				want    int
			}{
				{advance: ttl / 2, renew: true, want: 0}, // renewed to 1.5 ttl from the claim
				{advance: ttl/2 + time.Second, want: 0},  // past the first expiry, not the renewed one
				{advance: ttl, want: 1},                  // not renewed again: it ran out
			}
			for i, s := range steps {
				clk.Add(s.advance)
				if s.renew {
					if err := email.RenewForTest(a.w); err != nil {
						t.Fatal(err)
					}
				}
				if got, err := email.ClaimForTest(other.w, 1); err != nil || got != s.want {
					t.Fatalf("step %d: the other node claimed %d, %v; want %d", i, got, err, s.want)
				}
			}
		})
	}
}
