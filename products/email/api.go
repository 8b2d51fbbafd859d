package email

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/utils"

	"github.com/gatehouse-dev/gatehouse/edge"
	"github.com/gatehouse-dev/gatehouse/edge/apierr"
	"github.com/gatehouse-dev/gatehouse/edge/auth"
	"github.com/gatehouse-dev/gatehouse/edge/cursor"
	"github.com/gatehouse-dev/gatehouse/edge/httpx"
	"github.com/gatehouse-dev/gatehouse/edge/strictjson"
	"github.com/gatehouse-dev/gatehouse/edge/tenancy"
)

// API is the product's HTTP side: the public send route and the dashboard routes.
type API struct {
	svc     *Service
	auth    *auth.Authenticator
	cursors *cursor.Cursors
}

var (
	_ edge.Product      = (*API)(nil)
	_ edge.AdminProduct = (*API)(nil)
)

// NewAPI returns the product to mount at {public_url}/email.
func NewAPI(svc *Service, a *auth.Authenticator, cursors *cursor.Cursors) *API {
	return &API{svc: svc, auth: a, cursors: cursors}
}

// Segment implements edge.Product.
func (a *API) Segment() string { return "email" }

// Mount registers POST /notifications/send (secret key scoped for email).
func (a *API) Mount(r fiber.Router) {
	a.auth.Handle(r, http.MethodPost, "/notifications/send", auth.Rule{Product: "email", SecretOnly: true},
		httpx.BodyLimit(MaxBodyBytes), a.send)
}

// MountAdmin registers the dashboard routes under /admin/v1.
func (a *API) MountAdmin(r fiber.Router) {
	r.Get("/email/messages", a.list)
	r.Get("/email/messages/:id", a.get)
	r.Post("/email/events", httpx.BodyLimit(64<<10), a.event)
	r.Get("/orgs/:org/suppressions", a.listSuppressions)
	r.Post("/orgs/:org/suppressions", a.addSuppression)
	r.Delete("/orgs/:org/suppressions/:email", a.removeSuppression)
	a.mountTemplates(r)
}

// org checks that the org of the route exists and returns its slug (copied: it outlives c).
func (a *API) org(c *fiber.Ctx) (string, error) {
	org := utils.CopyString(c.Params("org"))
	if _, err := a.svc.tenants.Org(c.UserContext(), org); errors.Is(err, tenancy.ErrNotFound) {
		return "", errNoOrg
	} else if err != nil {
		return "", err
	}
	return org, nil
}

func (a *API) listSuppressions(c *fiber.Ctx) error {
	org, err := a.org(c)
	if err != nil {
		return err
	}
	list, err := a.svc.Suppressions(c.UserContext(), org)
	if err != nil {
		return err
	}
	return c.JSON(httpx.NewList(list, ""))
}

func (a *API) addSuppression(c *fiber.Ctx) error {
	var req struct {
		Email  string `json:"email"`
		Reason string `json:"reason"`
	}
	if err := httpx.DecodeJSON(c, &req, apierr.CodeValidationFailed); err != nil {
		return err
	}
	if !validAddress(req.Email) {
		return apierr.Validation(apierr.FieldProblem{Field: "email", Problem: "must be an email address"})
	}
	org, err := a.org(c)
	if err != nil {
		return err
	}
	if err := a.svc.Suppress(c.UserContext(), org, req.Email, "admin", req.Reason); err != nil {
		return err
	}
	return c.Status(fiber.StatusCreated).JSON(fiber.Map{"email": strings.ToLower(req.Email)})
}

func (a *API) removeSuppression(c *fiber.Ctx) error {
	if err := a.svc.Unsuppress(c.UserContext(), c.Params("org"), c.Params("email")); err != nil {
		return err
	}
	return c.SendStatus(fiber.StatusNoContent)
}

func (a *API) send(c *fiber.Ctx) error {
	var req SendRequest
	if err := httpx.DecodeJSONWith(c, &req, strictjson.Options{UseNumber: true, DisallowUnknownFields: true},
		apierr.CodeValidationFailed, decodeError); err != nil {
		return err
	}
	k := auth.KeyOf(c)
	idem := utils.CopyString(c.Get("Idempotency-Key"))
	rc, err := a.svc.Send(c.UserContext(), Caller{Org: k.Org, Project: k.Project}, idem, req)
	if err != nil {
		return err
	}
	return c.Status(fiber.StatusAccepted).JSON(rc)
}

func (a *API) get(c *fiber.Ctx) error {
	m, err := a.svc.Get(c.UserContext(), c.Params("id"))
	if err != nil {
		return err
	}
	if !auth.AdminOf(c).SeesOrg(m.Org) {
		return ErrMessageNotFound // another org's message: as if there were none
	}
	return c.JSON(m)
}

func (a *API) list(c *fiber.Ctx) error {
	limit, err := httpx.QueryInt(c, "limit", 25, 1, 100)
	if err != nil {
		return err
	}
	q := ListQuery{Status: Status(c.Query("status")), Tag: utils.CopyString(c.Query("tag")), Limit: limit}
	if q.Status != "" && !q.Status.Valid() {
		return invalid("status", "must be one of queued, sent, delivered, bounced, spam, suppressed, failed")
	}
	q.Status = Status(utils.CopyString(string(q.Status)))
	if adm := auth.AdminOf(c); adm == nil || !adm.Operator {
		q.Org = adm.OrgOrNone() // a member lists only its own org's messages
	}
	scope := "email/messages\x00" + string(q.Status) + "\x00" + q.Tag + "\x00" + q.Org
	if cur := c.Query("cursor"); cur != "" {
		p, err := a.cursors.Decode(scope, cur)
		if err != nil {
			return err
		}
		q.After = string(p)
	}
	msgs, next, err := a.svc.List(c.UserContext(), q)
	if err != nil {
		return err
	}
	nc := ""
	if next != "" {
		nc = a.cursors.Encode(scope, []byte(next))
	}
	return c.JSON(httpx.NewList(msgs, nc))
}

func (a *API) event(c *fiber.Ctx) error {
	var ev Event
	if err := httpx.DecodeJSON(c, &ev, apierr.CodeValidationFailed); err != nil {
		return err
	}
	if adm := auth.AdminOf(c); adm == nil || !adm.Operator {
		// A member may report events only for its own org's messages.
		if m, err := a.svc.Get(c.UserContext(), ev.MessageID); err == nil && !adm.SeesOrg(m.Org) {
			return ErrMessageNotFound
		}
	}
	m, err := a.svc.ApplyEvent(c.UserContext(), ev)
	if err != nil {
		return err
	}
	return c.JSON(Receipt{ID: m.ID, Status: m.Status})
}

// decodeError turns a JSON decoding failure of a send request into 400 VALIDATION_FAILED
// with details naming the field, as decisions.md section 2 asks of every VALIDATION_FAILED.
// The decoder's own text (Go type names) is kept as the internal cause, never sent.
func decodeError(err error) error {
	var p apierr.FieldProblem
	var typeErr *json.UnmarshalTypeError
	switch {
	case errors.As(err, &typeErr) && typeErr.Field == "metadata":
		p = apierr.FieldProblem{Field: "metadata", Problem: "must be an object of string values"}
	case errors.As(err, &typeErr) && typeErr.Field != "":
		p = apierr.FieldProblem{Field: typeErr.Field, Problem: "must be " + jsonKind(typeErr.Type.Kind().String())}
	case errors.As(err, &typeErr):
		p = apierr.FieldProblem{Field: "body", Problem: "must be a JSON object"}
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		name := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
		p = apierr.FieldProblem{Field: name, Problem: "is not a field of a send request"}
	default:
		p = apierr.FieldProblem{Field: "body", Problem: "must be a valid JSON object"}
	}
	e := apierr.Validation(p)
	e.Err = err
	return e
}

// jsonKind names a Go kind the way a JSON caller knows it.
func jsonKind(kind string) string {
	switch kind {
	case "string":
		return "a string"
	case "struct", "map":
		return "an object"
	case "slice", "array":
		return "an array"
	case "bool":
		return "a boolean"
	case "int", "int64", "float64":
		return "a number"
	}
	return "of another type"
}
