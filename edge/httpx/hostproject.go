package httpx

import "github.com/gofiber/fiber/v2"

type hostProjectLocal struct{}

// SetHostProject marks the request as arriving on a tenant domain of project (edge's host
// routing, decisions.md 9.4): what it reaches must be that project's.
func SetHostProject(c *fiber.Ctx, project string) { c.Locals(hostProjectLocal{}, project) }

// HostProject returns the project whose tenant domain the request arrived on, or "" on the
// gateway's own hosts. API keys of another project are refused there (edge/auth), and so are
// other projects' assets (products/files).
func HostProject(c *fiber.Ctx) string {
	p, _ := c.Locals(hostProjectLocal{}).(string)
	return p
}
