package forms

import (
	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/utils"

	"github.com/gatehouse-dev/gatehouse/edge/httpx"
)

// forms answers GET /admin/v1/projects/{project}/forms: the dashboard's form picker, one page.
func (p *API) forms(c *fiber.Ctx) error {
	list, err := p.svc.Forms(c.UserContext(), utils.CopyString(c.Params("project")))
	if err != nil {
		return err
	}
	return c.JSON(httpx.NewList(list, ""))
}
