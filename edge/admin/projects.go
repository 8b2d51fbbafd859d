package admin

import (
	"github.com/gofiber/fiber/v2"

	"github.com/gatehouse-dev/gatehouse/edge/httpx"
	"github.com/gatehouse-dev/gatehouse/edge/tenancy"
)

// listProjects answers GET /orgs/{org}/projects: the org's projects in id order, for the
// dashboard's project picker (404 for an org that does not exist).
func (a *API) listProjects(c *fiber.Ctx) error {
	org := c.Params("org")
	if _, err := a.t.Org(c.UserContext(), org); err != nil {
		return toAPI(err)
	}
	all, err := a.t.Projects(c.UserContext())
	if err != nil {
		return err
	}
	out := []tenancy.ProjectInfo{}
	for _, p := range all {
		if p.Org == org {
			out = append(out, p)
		}
	}
	return c.JSON(httpx.NewList(out, ""))
}
