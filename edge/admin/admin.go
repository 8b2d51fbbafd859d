// Package admin is the admin API under /admin/v1 that the foundation owns: applying tenants
// documents and creating, listing and revoking keys. Products add their own dashboard routes
// beside these (email: suppression lists; plugins: module uploads). Every route takes the admin
// token (the operator) or a dashboard session (accounts.go); a member's session reaches only its
// own org.
package admin

import (
	"errors"
	"mime"

	"github.com/gofiber/fiber/v2"

	"github.com/gatehouse-dev/gatehouse/edge/apierr"
	"github.com/gatehouse-dev/gatehouse/edge/auth"
	"github.com/gatehouse-dev/gatehouse/edge/httpx"
	"github.com/gatehouse-dev/gatehouse/edge/pluginreg"
	"github.com/gatehouse-dev/gatehouse/edge/tenancy"
)

// API serves the foundation's admin routes.
type API struct{ t *tenancy.Service }

// NewAPI returns the admin API over the tenancy service.
func NewAPI(t *tenancy.Service) *API { return &API{t: t} }

// MountAdmin registers the routes under /admin/v1 (the token check is the server's).
func (a *API) MountAdmin(r fiber.Router) {
	r.Post("/apply", auth.OperatorOnly, httpx.BodyLimit(tenancy.MaxDocumentBytes), a.apply)
	r.Post("/keys", a.createKey)
	r.Get("/orgs/:org/keys", a.listKeys)
	r.Get("/orgs/:org/projects", a.listProjects)
	r.Delete("/orgs/:org/keys/:name", a.revokeKey)
	r.Delete("/orgs/:org/projects/:project/keys/:name", a.revokeKey)
}

// toAPI maps tenancy's typed errors to API errors (an *InvalidError becomes VALIDATION_FAILED
// with one detail per problem): the one place this is done.
func toAPI(err error) error {
	var inv *tenancy.InvalidError
	var refused *tenancy.RefusedError
	switch {
	case errors.As(err, &refused):
		return pluginreg.RefusedAPIError(refused)
	case errors.As(err, &inv):
		e := apierr.Validation()
		e.Message = inv.Error()
		for _, p := range inv.Problems {
			e.Details = append(e.Details, apierr.FieldProblem{Field: p.Path, Problem: p.Message, Line: p.Line})
		}
		return e
	case errors.Is(err, tenancy.ErrNotFound):
		return apierr.New(404, apierr.CodeNotFound, "no such entity", err)
	case errors.Is(err, tenancy.ErrTooLarge):
		return apierr.ErrTooLarge
	case errors.Is(err, tenancy.ErrTooManyChanges):
		return apierr.New(413, "", "the document's changes are more than one transaction takes: apply it in parts (each org or project alone), or raise storage.memtable_mb (a transaction holds about 15% of one)", err)
	}
	return err
}

// ErrDocumentType refuses a tenants document sent with a Content-Type that is neither YAML nor JSON.
var ErrDocumentType = apierr.New(415, apierr.CodeUnsupportedContentType, "this route takes a YAML or JSON tenants document (Content-Type: application/yaml or application/json)", nil)

// isYAMLType reports whether a Content-Type names YAML (application/yaml, text/yaml and their x- forms).
func isYAMLType(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return false
	}
	switch mt {
	case "application/yaml", "application/x-yaml", "text/yaml", "text/x-yaml":
		return true
	}
	return false
}

func (a *API) apply(c *fiber.Ctx) error {
	if ct := c.Get(fiber.HeaderContentType); !httpx.IsJSONType(ct) && !isYAMLType(ct) {
		return ErrDocumentType
	}
	doc, err := a.t.Parse(c.Body())
	if err != nil {
		return toAPI(err)
	}
	rep, err := a.t.Apply(c.UserContext(), doc)
	if err != nil {
		return toAPI(err)
	}
	return c.JSON(rep)
}

type keyRequest struct {
	Org      string   `json:"org"`
	Project  string   `json:"project"`
	Name     string   `json:"name"`
	Kind     string   `json:"kind"`
	Products []string `json:"products"`
}

func (a *API) createKey(c *fiber.Ctx) error {
	var req keyRequest
	if err := httpx.DecodeJSON(c, &req, apierr.CodeValidationFailed); err != nil {
		return err
	}
	if err := auth.RequireOrg(c, req.Org); err != nil {
		return err
	}
	g, err := a.t.CreateKey(c.UserContext(), tenancy.KeyRequest{Org: req.Org, Project: req.Project, Name: req.Name, Kind: req.Kind, Products: req.Products})
	if err != nil {
		return toAPI(err)
	}
	return c.Status(fiber.StatusCreated).JSON(g)
}

func (a *API) listKeys(c *fiber.Ctx) error {
	keys, err := a.t.Keys(c.UserContext(), c.Params("org"))
	if err != nil {
		return err
	}
	return c.JSON(httpx.NewList(keys, ""))
}

func (a *API) revokeKey(c *fiber.Ctx) error {
	err := a.t.RevokeKey(c.UserContext(), c.Params("org"), c.Params("project"), c.Params("name"))
	if err != nil {
		return toAPI(err)
	}
	return c.SendStatus(fiber.StatusNoContent)
}
