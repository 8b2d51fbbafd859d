package email_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/products/email"
)

// TestWorkerHealthy: a started worker is healthy, and reports ErrWorkerFailing once its store
// refuses the queue scans (here: the store is closed under it), for /readyz to answer 503.
func TestWorkerHealthy(t *testing.T) {
	t.Parallel()
	svc, _, db := newServiceDB(t, email.Options{})
	w := svc.NewWorker(email.WorkerOptions{Transport: &email.Outbox{Dir: t.TempDir()}, PollInterval: 5 * time.Millisecond})
	ctx := context.Background()
	if err := w.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if err := w.Healthy(); err != nil {
		t.Fatalf("Healthy() after Start = %v", err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	// The worker scans every PollInterval: wait for a scan of the closed store.
	deadline := time.Now().Add(10 * time.Second)
	for w.Healthy() == nil && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if err := w.Healthy(); !errors.Is(err, email.ErrWorkerFailing) {
		t.Errorf("Healthy() over a closed store = %v, want ErrWorkerFailing", err)
	}
	sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	_ = w.Stop(sctx)
}
