package edge

import (
	"context"
	"net"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/gatehouse-dev/gatehouse/edge/apierr"
	"github.com/gatehouse-dev/gatehouse/edge/httpx"
)

// TenantHosts maps a tenant domain (a project's `domains:` entry, decisions.md 9.4) to its
// project and what it serves: assets, embed or api (edge/certs.Domains).
type TenantHosts interface {
	// TenantHost answers for host (lower-case, without port); ok is false for a host no
	// project lists.
	TenantHost(ctx context.Context, host string) (project, serves string, ok bool, err error)
}

// What a tenant domain serves.
const (
	servesAssets = "assets"
	servesEmbed  = "embed"
	servesAPI    = "api"
)

// apiSegments are the product segments a tenant domain serving api reaches: the public API
// products, not the asset or embed hosts nor the dashboard.
func apiSegments(products []Product) map[string]bool {
	out := map[string]bool{}
	for _, p := range products {
		switch seg := p.Segment(); seg {
		case "cdn", "embed", "dashboard":
		default:
			out[seg] = true
		}
	}
	return out
}

// tenantRoute routes a request on a tenant domain: to the project's assets (the asset host's
// routes), its embed pages (the embed host's) or its API (the public products, where only the
// project's keys are accepted and a path naming another project is not found). Everything
// else, the admin API, /metrics and the probes included, is not found there. A host no project
// lists goes on as a request on the gateway's own host.
func tenantRoute(c *fiber.Ctx, tenants TenantHosts, host, base string, api map[string]bool) error {
	project, serves, ok, err := tenants.TenantHost(c.UserContext(), host)
	if err != nil {
		return err
	}
	if !ok {
		return c.Next()
	}
	httpx.SetHostProject(c, project)
	path := c.Path()
	switch serves {
	case servesAssets, servesEmbed:
		prefix := base + "/cdn"
		if serves == servesEmbed {
			prefix = base + "/embed"
		}
		if !strings.HasPrefix(path, prefix+"/") {
			c.Path(prefix + path)
		}
		return c.Next()
	case servesAPI:
		rest, found := strings.CutPrefix(path, base+"/")
		seg, _, _ := strings.Cut(rest, "/")
		if !found || !api[seg] || namesOtherProject(rest, project) {
			return apierr.ErrNotFound
		}
		return c.Next()
	}
	return apierr.ErrNotFound
}

// namesOtherProject reports whether path has a "projects/<id>" part naming another project.
func namesOtherProject(path, project string) bool {
	parts := strings.Split(path, "/")
	for i := 0; i+1 < len(parts); i++ {
		if parts[i] == "projects" && parts[i+1] != project {
			return true
		}
	}
	return false
}

// hsts marks every HTTPS answer Strict-Transport-Security (tls.hsts): one year, so browsers
// keep to https for the name.
func hsts(c *fiber.Ctx) error {
	if c.Context().IsTLS() {
		c.Set(fiber.HeaderStrictTransportSecurity, "max-age=31536000")
	}
	return c.Next()
}

// stripPort returns host without its :port.
func stripPort(host string) string {
	if h, _, err := net.SplitHostPort(host); err == nil {
		return h
	}
	return host
}
