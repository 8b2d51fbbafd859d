package membership

import (
	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/utils"

	"github.com/gatehouse-dev/gatehouse/edge/apierr"
	"github.com/gatehouse-dev/gatehouse/edge/httpx"
)

// MountAdmin registers the dashboard's routes under /admin/v1: the read of a project's
// connections and the active switch.
func (p *API) MountAdmin(r fiber.Router) {
	r.Get("/projects/:project/connections", p.connections)
	r.Put("/projects/:project/connections/:name/active", httpx.BodyLimit(1<<10), p.setActive)
}

// connections answers GET /admin/v1/projects/{project}/connections: one page, no secret.
func (p *API) connections(c *fiber.Ctx) error {
	list, err := p.svc.Connections(c.UserContext(), utils.CopyString(c.Params("project")))
	if err != nil {
		return err
	}
	return c.JSON(httpx.NewList(list, ""))
}

// setActive answers PUT /admin/v1/projects/{project}/connections/{name}/active with
// {"active": true|false}: the project's connections after the switch, secrets withheld.
func (p *API) setActive(c *fiber.Ctx) error {
	var req struct {
		Active *bool `json:"active"`
	}
	if err := httpx.DecodeJSON(c, &req, apierr.CodeValidationFailed); err != nil {
		return err
	}
	if req.Active == nil {
		return apierr.Validation(apierr.FieldProblem{Field: "active", Problem: "is required (true or false)"})
	}
	list, err := p.svc.SetActive(c.UserContext(), utils.CopyString(c.Params("project")), utils.CopyString(c.Params("name")), *req.Active)
	if err != nil {
		return apiError(err)
	}
	return c.JSON(httpx.NewList(list, ""))
}
