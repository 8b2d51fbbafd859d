package email_test

import (
	"context"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/products/email"
	"github.com/gatehouse-dev/gatehouse/products/email/smtptest"
)

// TestStopReleasesAndRestart stops a worker while it delivers: the message in flight finishes,
// the claimed ones go back to the queue, and a new worker delivers them once each.
func TestStopReleasesAndRestart(t *testing.T) {
	t.Parallel()
	svc := newService(t, email.Options{})
	srv := smtptest.Start(t, nil)
	srv.SetDelay(150 * time.Millisecond)
	tr, err := email.NewSMTP(email.SMTPOptions{Host: srv.Host, Port: srv.Port, TLS: "none", HELO: "gatehouse.test"})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var ids []string
	for i := 0; i < 4; i++ {
		rc, err := svc.Send(ctx, demo, "", inlineReq(fmt.Sprintf("r%d@example.com", i)))
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, rc.ID)
	}
	newWorker := func() *email.Worker {
		return svc.NewWorker(email.WorkerOptions{Transport: tr, Concurrency: 1, PollInterval: 10 * time.Millisecond})
	}
	w := newWorker()
	if err := w.Start(ctx); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for srv.Attempts("r0@example.com") == 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := w.Stop(sctx); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if m, _ := svc.Get(ctx, ids[0]); m.Status != email.StatusDelivered {
		t.Errorf("in-flight message after Stop: %s, want delivered (Stop waits for it)", m.Status)
	}
	queued := 0
	for _, id := range ids[1:] {
		if m, _ := svc.Get(ctx, id); m.Status == email.StatusQueued {
			queued++
		}
	}
	if queued == 0 {
		t.Fatal("every message was delivered before Stop; the test proves nothing")
	}
	w2 := newWorker()
	if err := w2.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer w2.Stop(sctx)
	for _, id := range ids {
		for {
			m, _ := svc.Get(ctx, id)
			if m.Status == email.StatusDelivered {
				break
			}
			if time.Now().After(deadline.Add(5 * time.Second)) {
				t.Fatalf("%s still %s after restart", id, m.Status)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	if n := srv.Len(); n != len(ids) {
		t.Errorf("server received %d messages, want %d (no duplicates after a clean stop)", n, len(ids))
	}
}

// TestConnectionRefusedRetries: an SMTP server that is down is a temporary failure.
func TestConnectionRefusedRetries(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	_ = ln.Close() // nothing listens there now
	tr, err := email.NewSMTP(email.SMTPOptions{Host: "127.0.0.1", Port: port, TLS: "none", Timeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	out := tr.Session().Deliver(context.Background(), &email.Message{ID: "msg_01jd0000000000000000000000",
		From: email.Address{Email: "a@acme.test"}, To: email.Address{Email: "b@example.com"}, Subject: "s", Text: "t"})
	if out.Result != email.Retry || out.Detail == "" {
		t.Errorf("Deliver to a closed server = %+v, want Retry with a detail", out)
	}
}
