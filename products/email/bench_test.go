package email_test

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/gatehouse-dev/gatehouse/edge"
	"github.com/gatehouse-dev/gatehouse/edge/config"
	"github.com/gatehouse-dev/gatehouse/edge/cursor"
	"github.com/gatehouse-dev/gatehouse/edge/edgetest"
	"github.com/gatehouse-dev/gatehouse/products/email"
	"github.com/gatehouse-dev/gatehouse/products/email/smtptest"
)

// BenchmarkSendAccepted measures accepted sends per second over loopback HTTP with durable
// (sync) writes and grouped commits: each 202 comes after the fsync'ed commit holding it.
func BenchmarkSendAccepted(b *testing.B) {
	var svc *email.Service
	h := edgetest.New(b, edgetest.Options{
		Tenants: tenants,
		Config:  func(c *config.Config) { c.Storage.SyncWrites = true },
		Products: func(t testing.TB, d edgetest.Deps) []edge.Product {
			var err error
			svc, err = email.NewService(email.Options{DB: d.DB, Tenancy: d.Tenancy})
			if err != nil {
				t.Fatal(err)
			}
			if err := d.Tenancy.Add(svc); err != nil {
				t.Fatal(err)
			}
			cur, _ := cursor.NewCursors([]byte("0123456789abcdef0123456789abcdef"))
			return []edge.Product{email.NewAPI(svc, d.Auth, cur)}
		},
	})
	b.Cleanup(func() { _ = svc.Close() })
	body := []byte(`{"to":{"email":"bench@example.com","name":"Bench"},"templateId":"welcome","variables":{"name":"Ada","product":"Gatehouse","count":3,"vip":true},"tags":["bench"],"metadata":{"run":"1"}}`)
	// fasthttp (already fiber's engine) keeps the load generator's own CPU cost low: the
	// client shares the 2 cores with the server.
	client := &fasthttp.Client{MaxConnsPerHost: 512}
	url := h.URL + "/email/notifications/send"
	var failed atomic.Int64
	b.SetParallelism(32)
	b.ResetTimer()
	cpu0 := cpuTime()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
		defer fasthttp.ReleaseRequest(req)
		defer fasthttp.ReleaseResponse(resp)
		for pb.Next() {
			req.Reset()
			req.SetRequestURI(url)
			req.Header.SetMethod("POST")
			req.Header.SetContentType("application/json")
			req.Header.Set("X-API-Key", "sk_live_demo_server")
			req.SetBody(body)
			if err := client.Do(req, resp); err != nil || resp.StatusCode() != 202 {
				failed.Add(1)
			}
		}
	})
	el := time.Since(start)
	cpu := cpuTime() - cpu0
	b.StopTimer()
	if n := failed.Load(); n > 0 {
		b.Fatalf("%d sends failed", n)
	}
	reportRate(b, el, cpu, "sends")
}

// cpuTime is the process's user+system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportRate reports the wall-clock rate and the CPU cost per operation, with the rate two
// whole cores would give at that cost (the machine is shared: wall-clock rates vary with
// other load, CPU per operation much less). The CPU includes the load generator.
func reportRate(b *testing.B, wall, cpu time.Duration, unit string) {
	per := float64(cpu.Microseconds()) / float64(b.N)
	b.ReportMetric(float64(b.N)/wall.Seconds(), unit+"/s")
	b.ReportMetric(per, "cpu-us/"+strings.TrimSuffix(unit, "s"))
	if per > 0 {
		b.ReportMetric(2e6/per, unit+"/s@2cores")
	}
}

// BenchmarkDeliverSMTP measures the delivery rate of queued messages to a local SMTP server,
// each worker goroutine reusing one connection across messages.
func BenchmarkDeliverSMTP(b *testing.B) {
	for _, conc := range []int{1, 4, 8} {
		b.Run(fmt.Sprintf("concurrency=%d", conc), func(b *testing.B) {
			var svc *email.Service
			h := edgetest.New(b, edgetest.Options{
				Tenants: tenants,
				Config:  func(c *config.Config) { c.Storage.SyncWrites = true },
				Products: func(t testing.TB, d edgetest.Deps) []edge.Product {
					var err error
					svc, err = email.NewService(email.Options{DB: d.DB, Tenancy: d.Tenancy})
					if err != nil {
						t.Fatal(err)
					}
					if err := d.Tenancy.Add(svc); err != nil {
						t.Fatal(err)
					}
					return nil
				},
			})
			_ = h
			srv := smtptest.Start(b, nil)
			ctx := context.Background()
			ids := make([]string, b.N)
			for i := range ids {
				rc, err := svc.Send(ctx, email.Caller{Org: "acme", Project: "demo"}, "", email.SendRequest{
					To: &email.Address{Email: fmt.Sprintf("r%d@example.com", i)}, TemplateID: "welcome",
					Variables: map[string]any{"name": "Ada", "product": "Gatehouse", "count": 1.0, "vip": false}})
				if err != nil {
					b.Fatal(err)
				}
				ids[i] = rc.ID
			}
			tr, _ := email.NewSMTP(email.SMTPOptions{Host: srv.Host, Port: srv.Port, TLS: "none", HELO: "bench.test"})
			w := svc.NewWorker(email.WorkerOptions{Transport: tr, Concurrency: conc, PollInterval: 5 * time.Millisecond})
			b.ResetTimer()
			cpu0 := cpuTime()
			start := time.Now()
			if err := w.Start(ctx); err != nil {
				b.Fatal(err)
			}
			for srv.Len() < b.N {
				time.Sleep(time.Millisecond)
			}
			// The last status writes land just after the server's acceptance.
			for {
				m, err := svc.Get(ctx, ids[len(ids)-1])
				if err == nil && m.Status == email.StatusDelivered {
					break
				}
				time.Sleep(time.Millisecond)
			}
			el := time.Since(start)
			cpu := cpuTime() - cpu0
			b.StopTimer()
			sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			_ = w.Stop(sctx)
			cancel()
			_ = svc.Close()
			reportRate(b, el, cpu, "msgs")
			b.ReportMetric(float64(srv.Connections()), "conns")
		})
	}
}
