package webhooks

import (
	"context"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/utils"

	"github.com/gatehouse-dev/gatehouse/edge/httpx"
)

// WebhookView is a webhook as the admin API lists it: never its signing secrets.
type WebhookView struct {
	Name   string   `json:"name"`
	URL    string   `json:"url"`
	Events []string `json:"events"`
}

// List returns a project's webhooks in name order, secrets withheld.
func (s *Service) List(ctx context.Context, project string) ([]WebhookView, error) {
	hooks, err := s.readHooks(ctx, project)
	if err != nil {
		return nil, err
	}
	out := make([]WebhookView, 0, len(hooks))
	for _, h := range hooks {
		out = append(out, WebhookView{Name: h.Name, URL: h.URL, Events: h.Events})
	}
	return out, nil
}

// list answers GET /admin/v1/projects/{project}/webhooks: the dashboard's webhook picker, one page.
func (a *API) list(c *fiber.Ctx) error {
	hooks, err := a.s.List(c.UserContext(), utils.CopyString(c.Params("project")))
	if err != nil {
		return err
	}
	return c.JSON(httpx.NewList(hooks, ""))
}
