package membership_test

import (
	"context"
	"io"
	"net/http"
	"testing"

	"github.com/gatehouse-dev/gatehouse/edge"
	"github.com/gatehouse-dev/gatehouse/edge/edgetest"
	"github.com/gatehouse-dev/gatehouse/products/membership"
)

func benchHarness(b *testing.B) (*edgetest.Harness, *membership.Service) {
	var svc *membership.Service
	h := edgetest.New(b, edgetest.Options{
		Tenants: tenants,
		Products: func(t testing.TB, d edgetest.Deps) []edge.Product {
			svc = newService(t, d)
			return []edge.Product{membership.NewAPI(svc, d.Auth)}
		},
	})
	return h, svc
}

// BenchmarkServiceConfig is the cached read behind every GET /config.
func BenchmarkServiceConfig(b *testing.B) {
	_, svc := benchHarness(b)
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := svc.Config(ctx, "demo"); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkGetConfig sends GET /membership/config over loopback: 200s, and 304s with the ETag.
func BenchmarkGetConfig(b *testing.B) {
	h, _ := benchHarness(b)
	etag := h.Do("GET", "/membership/config", nil, "X-API-Key", "pk_test_demo_member").Header.Get("ETag")
	for _, bc := range []struct {
		name, ifNoneMatch string
		status            int
	}{{"200", "", 200}, {"304", etag, 304}} {
		b.Run(bc.name, func(b *testing.B) {
			client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					req, _ := http.NewRequest("GET", h.URL+"/membership/config", nil)
					req.Header.Set("X-API-Key", "pk_test_demo_member")
					if bc.ifNoneMatch != "" {
						req.Header.Set("If-None-Match", bc.ifNoneMatch)
					}
					resp, err := client.Do(req)
					if err != nil {
						b.Error(err)
						return
					}
					_, _ = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					if resp.StatusCode != bc.status {
						b.Errorf("status %d, want %d", resp.StatusCode, bc.status)
						return
					}
				}
			})
		})
	}
}
