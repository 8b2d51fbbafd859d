package edge

import (
	"context"
	"net/http/httptest"
	"testing"

	"github.com/gofiber/fiber/v2"

	"github.com/gatehouse-dev/gatehouse/edge/config"
	"github.com/gatehouse-dev/gatehouse/edge/httpx"
)

// fakeHosts lists tenant domains: host -> {project, serves}.
type fakeHosts map[string][2]string

func (f fakeHosts) TenantHost(_ context.Context, host string) (string, string, bool, error) {
	d, ok := f[host]
	return d[0], d[1], ok, nil
}

// TestTenantDomainRouting: a tenant domain reaches its project's assets, embed pages or API
// only; the gateway's own host is routed as before.
func TestTenantDomainRouting(t *testing.T) {
	cfg := config.Default()
	cfg.PublicURL = "http://gw.example.com"
	app := fiber.New(fiber.Config{ErrorHandler: httpx.ErrorHandler(nil)})
	hosts := fakeHosts{"img.customer.test": {"demo", "assets"}, "forms.customer.test": {"demo", "embed"}, "api.customer.test": {"demo", "api"}}
	app.Use(hostRouting(cfg, "", hosts, map[string]bool{"records": true, "forms": true}))
	echo := func(c *fiber.Ctx) error { return c.SendString(c.Path() + " project=" + httpx.HostProject(c)) }
	for _, p := range []string{"/cdn/*", "/embed/*", "/records/*", "/forms/*", "/admin/v1/*", "/metrics", "/healthz"} {
		app.Get(p, echo)
	}
	for _, tc := range []struct {
		host, path string
		status     int
		body       string
	}{
		{"img.customer.test", "/acme/originals/a1/dot.png", 200, "/cdn/acme/originals/a1/dot.png project=demo"},
		{"img.customer.test:443", "/acme/originals/a1/dot.png", 200, "/cdn/acme/originals/a1/dot.png project=demo"},
		{"forms.customer.test", "/f/contact", 200, "/embed/f/contact project=demo"},
		{"api.customer.test", "/records/projects/demo/collections/posts/records", 200, "/records/projects/demo/collections/posts/records project=demo"},
		{"api.customer.test", "/forms/forms/contact", 200, "/forms/forms/contact project=demo"},
		{"api.customer.test", "/records/projects/other/collections/posts/records", 404, ""},
		{"api.customer.test", "/admin/v1/projects", 404, ""},
		{"api.customer.test", "/metrics", 404, ""},
		{"api.customer.test", "/cdn/acme/originals/a1/dot.png", 404, ""},
		{"gw.example.com", "/records/projects/other/x", 200, "/records/projects/other/x project="},
		{"unknown.example.com", "/metrics", 200, "/metrics project="},
	} {
		req := httptest.NewRequest("GET", tc.path, nil)
		req.Host = tc.host
		res, err := app.Test(req)
		if err != nil {
			t.Fatal(err)
		}
		body := make([]byte, 512)
		n, _ := res.Body.Read(body)
		if res.StatusCode != tc.status || (tc.body != "" && string(body[:n]) != tc.body) {
			t.Errorf("GET %s%s = %d %q, want %d %q", tc.host, tc.path, res.StatusCode, body[:n], tc.status, tc.body)
		}
	}
}
