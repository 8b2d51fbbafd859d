package main

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/edge/blob"
	"github.com/gatehouse-dev/gatehouse/edge/egress"
	"github.com/gatehouse-dev/gatehouse/edge/store"
	"github.com/gatehouse-dev/gatehouse/edge/tenancy"
	"github.com/gatehouse-dev/gatehouse/edge/webhooks"
	"github.com/gatehouse-dev/gatehouse/products/email"
	"github.com/gatehouse-dev/gatehouse/products/forms"
)

// BenchmarkSubmitWithHooks measures accepted submissions per second through the forms
// service (durable commits, 64 concurrent submitters, no HTTP) for a form with a notify
// address, an auto-reply and a form.submitted webhook (each submission also queues two emails
// and one delivery in its transaction), against the same form without them, in the same run.
// It reports subs/s for each and the ratio (docs/performance.md).
func BenchmarkSubmitWithHooks(b *testing.B) {
	rates := map[string]float64{}
	for _, hooked := range []bool{false, true} {
		name := map[bool]string{false: "plain", true: "notify+webhook"}[hooked]
		b.Run(name, func(b *testing.B) { rates[name] = benchHooks(b, hooked) })
	}
	if rates["plain"] > 0 && rates["notify+webhook"] > 0 {
		b.Logf("notify+webhook / plain = %.2f", rates["notify+webhook"]/rates["plain"])
	}
}

func benchHooks(b *testing.B, hooked bool) float64 {
	db, err := store.Open(store.Options{Dir: b.TempDir(), SyncWrites: true})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	ten := tenancy.New(db, tenancy.Options{})
	mail, err := email.NewService(email.Options{DB: db, Tenancy: ten})
	if err != nil {
		b.Fatal(err)
	}
	hooks, err := webhooks.New(webhooks.Options{DB: db, Egress: egress.New(egress.Options{})})
	if err != nil {
		b.Fatal(err)
	}
	blobs, err := blob.NewLocal(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	opts := forms.Options{DB: db, Blobs: blobs, RatePerMinute: 1 << 30}
	if hooked {
		opts.Events = formEvents{hooks: hooks, mail: mail, log: slog.New(slog.DiscardHandler)}
	}
	svc, err := forms.New(opts)
	if err != nil {
		b.Fatal(err)
	}
	defer svc.Close()
	for _, o := range []tenancy.Owner{svc, mail, hooks} {
		if err := ten.Add(o); err != nil {
			b.Fatal(err)
		}
	}
	doc := hooksDoc("https://hooks.example.com/in")
	if !hooked {
		doc = strings.ReplaceAll(doc, "notify: {to: [owner@acme.test]}", "")
		doc = strings.ReplaceAll(doc, "autoReply: {emailField: email, template: thanks}", "")
		doc = doc[:strings.Index(doc, "        webhooks:")]
	}
	d, err := tenancy.Parse([]byte(doc))
	if err != nil {
		b.Fatal(err)
	}
	if _, err := ten.Apply(context.Background(), d); err != nil {
		b.Fatal(err)
	}
	const clients = 64
	var next, failed atomic.Int64
	var wg sync.WaitGroup
	b.ResetTimer()
	start := time.Now()
	for g := 0; g < clients; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for next.Add(1) <= int64(b.N) {
				_, err := svc.Submit(context.Background(), forms.Input{Project: "site", Slug: "contact", KeyHash: "bench",
					Values: map[string]any{"name": "Ada", "email": "ada@example.com", "message": "a benchmark submission"}})
				if err != nil {
					failed.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	if failed.Load() > 0 {
		b.Fatalf("%d submissions failed", failed.Load())
	}
	if hooked { // the work measured was done: emails and deliveries are queued
		msgs, _, err := mail.List(context.Background(), email.ListQuery{Tag: "form-notification", Limit: 1})
		deliveries := 0
		_ = db.View(context.Background(), func(txn *store.Txn) error {
			return txn.Iterate(store.IterOptions{Prefix: store.Prefix("webhooks", "d", "site", "main"), KeysOnly: true},
				func(_, _ []byte) (bool, error) { deliveries++; return true, nil })
		})
		if err != nil || len(msgs) == 0 || deliveries != b.N {
			b.Fatalf("after %d submissions: notifications %d (%v), webhook deliveries %d", b.N, len(msgs), err, deliveries)
		}
	}
	rate := float64(b.N) / elapsed.Seconds()
	b.ReportMetric(rate, "subs/s")
	return rate
}
