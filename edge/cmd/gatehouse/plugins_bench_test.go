package main

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/edge/blob"
	"github.com/gatehouse-dev/gatehouse/edge/cmd/gatehouse/internal/ports"
	"github.com/gatehouse-dev/gatehouse/edge/store"
	"github.com/gatehouse-dev/gatehouse/edge/tenancy"
	"github.com/gatehouse-dev/gatehouse/plugins/host"
	"github.com/gatehouse-dev/gatehouse/products/forms"
)

// BenchmarkFormsSubmitSpamFilter is the durable forms submit rate (64 callers, grouped fsync
// commits) without a plugin and with the spamguard example as the forms.submit filter.
func BenchmarkFormsSubmitSpamFilter(b *testing.B) {
	for _, withFilter := range []bool{false, true} {
		b.Run(fmt.Sprintf("filter=%v", withFilter), func(b *testing.B) {
			ctx := context.Background()
			db, err := store.Open(store.Options{Dir: b.TempDir(), SyncWrites: true})
			if err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			blobs, _ := blob.NewLocal(b.TempDir())
			opts := forms.Options{DB: db, Blobs: blobs, RatePerMinute: 1 << 30}
			if withFilter {
				mods := buildExamples(b, "spamguard")
				hopts := host.DefaultOptions()
				hopts.CacheDir = b.TempDir()
				h, err := host.New(hopts)
				if err != nil {
					b.Fatal(err)
				}
				defer h.Close()
				if err := h.Register(ctx, host.Registration{Project: "p", Name: "spam", ModulePath: mods["spamguard"],
					Hooks: []string{host.HookFormsSubmit}, Config: map[string]string{"blockedWords": "casino,loan"}}); err != nil {
					b.Fatal(err)
				}
				opts.Plugins = ports.FormsPlugins{Host: h}
			}
			svc, err := forms.NewService(opts)
			if err != nil {
				b.Fatal(err)
			}
			defer svc.Close()
			ten, err := tenancy.NewService(tenancy.Options{DB: db})
			if err != nil {
				b.Fatal(err)
			}
			if err := ten.Add(svc); err != nil {
				b.Fatal(err)
			}
			doc, err := tenancy.Parse([]byte(`orgs: [{slug: a, projects: [{id: p, forms: [{slug: contact, published: true, fields: [{name: email, type: email}, {name: message, type: textarea}]}]}]}]`))
			if err != nil {
				b.Fatal(err)
			}
			if _, err := ten.Apply(ctx, doc); err != nil {
				b.Fatal(err)
			}
			b.SetParallelism(32)
			b.ResetTimer()
			start := time.Now()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if _, err := svc.Submit(ctx, forms.Input{Project: "p", Slug: "contact", KeyHash: "bench",
						Values: map[string]any{"email": "bench@example.com", "message": "a benchmark submission with no links"}}); err != nil {
						b.Error(err)
						return
					}
				}
			})
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "submissions/s")
		})
	}
}
