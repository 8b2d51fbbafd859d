package webhooks

import (
	"errors"
	"strconv"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/utils"

	"github.com/gatehouse-dev/gatehouse/edge/apierr"
	"github.com/gatehouse-dev/gatehouse/edge/cursor"
	"github.com/gatehouse-dev/gatehouse/edge/httpx"
	"github.com/gatehouse-dev/gatehouse/edge/tenancy"
)

// Page sizes of the deliveries log (?limit=).
const (
	defaultLimit = 50
	maxLimit     = 200
)

// API serves the webhook admin routes.
type API struct {
	s       *Service
	cursors *cursor.Cursors
}

// NewAPI returns the admin routes over s; cursors signs the log's pagination cursors.
func NewAPI(s *Service, cursors *cursor.Cursors) *API { return &API{s: s, cursors: cursors} }

// MountAdmin registers GET /projects/{project}/webhooks (api_list.go),
// GET /projects/{project}/webhooks/{name}/deliveries, POST /projects/{project}/webhooks/{name}/test,
// and PUT and DELETE /projects/{project}/webhooks/{name} (the dashboard's editor).
func (a *API) MountAdmin(r fiber.Router) {
	r.Get("/projects/:project/webhooks", a.list)
	r.Get("/projects/:project/webhooks/:name/deliveries", a.deliveries)
	r.Post("/projects/:project/webhooks/:name/test", a.test)
	r.Put("/projects/:project/webhooks/:name", httpx.BodyLimit(16<<10), a.put)
	r.Delete("/projects/:project/webhooks/:name", a.remove)
}

var errNoWebhook = apierr.New(404, apierr.CodeNotFound, "no such webhook in this project", nil)

func mapErr(err error) error {
	var inv *tenancy.InvalidError
	switch {
	case errors.Is(err, ErrNotFound):
		return apierr.New(errNoWebhook.Status, errNoWebhook.Code, errNoWebhook.Message, err)
	case errors.Is(err, tenancy.ErrNotFound):
		return apierr.New(404, apierr.CodeNotFound, "no such project", err)
	case errors.As(err, &inv):
		e := apierr.Validation()
		for _, p := range inv.Problems {
			e.Details = append(e.Details, apierr.FieldProblem{Field: p.Path, Problem: p.Message})
		}
		e.Message = "invalid webhook: " + e.Details[0].Field + " " + e.Details[0].Problem
		return e
	}
	return err
}

// put answers PUT /projects/{project}/webhooks/{name} with {"url","events","secret"?}: 201 when
// created, 200 when replaced, with the webhook (never its secret) and "secret" only when one was
// generated (shown this once).
func (a *API) put(c *fiber.Ctx) error {
	var req struct {
		URL    string   `json:"url"`
		Events []string `json:"events"`
		Secret string   `json:"secret"`
	}
	if err := httpx.DecodeJSON(c, &req, apierr.CodeValidationFailed); err != nil {
		return err
	}
	h := Webhook{Name: utils.CopyString(c.Params("name")), URL: req.URL, Events: req.Events, Secret: req.Secret}
	created, secret, err := a.s.PutHook(c.UserContext(), utils.CopyString(c.Params("project")), h)
	if err != nil {
		return mapErr(err)
	}
	status := fiber.StatusOK
	if created {
		status = fiber.StatusCreated
	}
	out := struct {
		WebhookView
		Secret string `json:"secret,omitempty"`
	}{WebhookView{Name: h.Name, URL: h.URL, Events: h.Events}, secret}
	return c.Status(status).JSON(out)
}

// remove answers DELETE /projects/{project}/webhooks/{name}: 204, or 404.
func (a *API) remove(c *fiber.Ctx) error {
	if err := a.s.DeleteHook(c.UserContext(), utils.CopyString(c.Params("project")), utils.CopyString(c.Params("name"))); err != nil {
		return mapErr(err)
	}
	return c.SendStatus(fiber.StatusNoContent)
}

func (a *API) deliveries(c *fiber.Ctx) error {
	project, name := utils.CopyString(c.Params("project")), utils.CopyString(c.Params("name"))
	limit := defaultLimit
	if v := c.Query("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxLimit {
			return apierr.Validation(apierr.FieldProblem{Field: "limit", Problem: "must be a number from 1 to 200"})
		}
		limit = n
	}
	scope := "webhook-deliveries/" + project + "/" + name
	after := ""
	if cur := c.Query("cursor"); cur != "" {
		raw, err := a.cursors.Decode(scope, cur)
		if err != nil {
			return apierr.ErrInvalidCursor
		}
		after = string(raw)
	}
	items, next, err := a.s.Attempts(c.UserContext(), project, name, after, limit)
	if err != nil {
		return mapErr(err)
	}
	if next != "" {
		next = a.cursors.Encode(scope, []byte(next))
	}
	return c.JSON(httpx.NewList(items, next))
}

func (a *API) test(c *fiber.Ctx) error {
	project, name := utils.CopyString(c.Params("project")), utils.CopyString(c.Params("name"))
	r, err := a.s.Ping(c.UserContext(), project, name)
	if err != nil {
		return mapErr(err)
	}
	return c.JSON(r)
}
