package webhooks

import (
	"errors"
	"strconv"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/utils"

	"github.com/gatehouse-dev/gatehouse/edge/apierr"
	"github.com/gatehouse-dev/gatehouse/edge/cursor"
	"github.com/gatehouse-dev/gatehouse/edge/httpx"
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
// GET /projects/{project}/webhooks/{name}/deliveries and POST /projects/{project}/webhooks/{name}/test.
func (a *API) MountAdmin(r fiber.Router) {
	r.Get("/projects/:project/webhooks", a.list)
	r.Get("/projects/:project/webhooks/:name/deliveries", a.deliveries)
	r.Post("/projects/:project/webhooks/:name/test", a.test)
}

var errNoWebhook = apierr.New(404, apierr.CodeNotFound, "no such webhook in this project", nil)

func mapErr(err error) error {
	if errors.Is(err, ErrNotFound) {
		return apierr.New(errNoWebhook.Status, errNoWebhook.Code, errNoWebhook.Message, err)
	}
	return err
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
