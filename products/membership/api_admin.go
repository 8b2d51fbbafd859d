package membership

import (
	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/utils"

	"github.com/gatehouse-dev/gatehouse/edge/httpx"
)

// MountAdmin registers the dashboard's read of a project's connections under /admin/v1.
func (p *Product) MountAdmin(r fiber.Router) {
	r.Get("/projects/:project/connections", p.connections)
}

// connections answers GET /admin/v1/projects/{project}/connections: one page, no secret.
func (p *Product) connections(c *fiber.Ctx) error {
	list, err := p.svc.Connections(c.UserContext(), utils.CopyString(c.Params("project")))
	if err != nil {
		return err
	}
	return c.JSON(httpx.NewList(list, ""))
}
