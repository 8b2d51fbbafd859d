// Package admin is the admin API under /admin/v1 that the foundation owns: applying tenants
// documents, creating and revoking keys, and the organizations' suppression lists. Products
// add their own dashboard routes beside these. Every route takes the admin token (the operator)
// or a dashboard session (accounts.go); a member's session reaches only its own org.
package admin

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"mime"
	"net/mail"
	"strings"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/utils"

	"github.com/gatehouse-dev/gatehouse/edge/auth"
	"github.com/gatehouse-dev/gatehouse/edge/httpx"
	"github.com/gatehouse-dev/gatehouse/edge/tenancy"
)

// API serves the foundation's admin routes.
type API struct{ t *tenancy.Service }

// New returns the admin API over the tenancy service.
func New(t *tenancy.Service) *API { return &API{t: t} }

// MountAdmin registers the routes under /admin/v1 (the token check is the server's).
func (a *API) MountAdmin(r fiber.Router) {
	r.Post("/apply", auth.OperatorOnly, httpx.BodyLimit(tenancy.MaxDocumentBytes), a.apply)
	r.Post("/keys", a.createKey)
	r.Get("/orgs/:org/keys", a.listKeys)
	r.Delete("/orgs/:org/keys/:name", a.revokeKey)
	r.Delete("/orgs/:org/projects/:project/keys/:name", a.revokeKey)
	r.Get("/orgs/:org/suppressions", a.listSuppressions)
	r.Post("/orgs/:org/suppressions", a.addSuppression)
	r.Delete("/orgs/:org/suppressions/:email", a.removeSuppression)
	r.Post("/plugins", httpx.BodyLimit(tenancy.MaxModuleBytes), a.uploadModule)
}

// uploadModule stores a Wasm module sent as the raw body of POST /plugins?project=P&name=N.
// A tenants-document plugin whose module is N uses it; registered plugins swap to it at once.
func (a *API) uploadModule(c *fiber.Ctx) error {
	project, name := utils.CopyString(c.Query("project")), utils.CopyString(c.Query("name"))
	if project == "" || name == "" {
		return httpx.Validation(httpx.FieldProblem{Field: "project,name", Problem: "both query parameters are required"})
	}
	if err := a.ownProject(c, project); err != nil {
		return err
	}
	module := bytes.Clone(c.Body())
	if err := a.t.PutModule(c.UserContext(), project, name, module); err != nil {
		return toAPI(err)
	}
	sum := sha256.Sum256(module)
	return c.Status(fiber.StatusCreated).JSON(fiber.Map{"project": project, "name": name, "size": len(module), "sha256": hex.EncodeToString(sum[:])})
}

// ownProject refuses with 403 FORBIDDEN a member's upload to a project of another org (or to
// no project): uploading is an operator's act across orgs (decisions.md 8.2).
func (a *API) ownProject(c *fiber.Ctx, project string) error {
	adm := auth.AdminOf(c)
	if adm != nil && adm.Operator {
		return nil
	}
	p, err := a.t.Project(c.UserContext(), project)
	if err != nil || !adm.SeesOrg(p.Org) {
		return auth.ErrOperatorOnly
	}
	return nil
}

// toAPI maps tenancy's typed errors to API errors: the one place this package does so.
func toAPI(err error) error {
	var inv *tenancy.InvalidError
	var refused *tenancy.RefusedError
	switch {
	case errors.As(err, &refused):
		e := httpx.New(400, CodePluginRefused, "plugin refused", err)
		for _, p := range refused.Problems {
			e.Details = append(e.Details, httpx.FieldProblem{Field: p.Path, Problem: p.Message})
		}
		if len(e.Details) > 0 {
			e.Message = "plugin refused: " + e.Details[0].Field + ": " + e.Details[0].Problem
		}
		return e
	case errors.As(err, &inv):
		e := httpx.Validation()
		e.Message = inv.Error()
		for _, p := range inv.Problems {
			e.Details = append(e.Details, httpx.FieldProblem{Field: p.Path, Problem: p.Message, Line: p.Line})
		}
		return e
	case errors.Is(err, tenancy.ErrNotFound):
		return httpx.New(404, httpx.CodeNotFound, "no such entity", err)
	case errors.Is(err, tenancy.ErrTooLarge):
		return httpx.ErrTooLarge
	case errors.Is(err, tenancy.ErrNotWasm):
		return httpx.Validation(httpx.FieldProblem{Field: "body", Problem: err.Error()})
	}
	return err
}

// ErrDocumentType refuses a tenants document sent with a Content-Type that is neither YAML nor JSON.
var ErrDocumentType = httpx.New(415, httpx.CodeUnsupportedContentType, "this route takes a YAML or JSON tenants document (Content-Type: application/yaml or application/json)", nil)

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
	doc, err := tenancy.Parse(c.Body())
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
	if err := httpx.DecodeJSON(c, &req, httpx.CodeValidationFailed); err != nil {
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

func (a *API) listSuppressions(c *fiber.Ctx) error {
	if _, err := a.t.Org(c.UserContext(), c.Params("org")); err != nil {
		return toAPI(err)
	}
	list, err := a.t.Suppressions(c.UserContext(), c.Params("org"))
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
	if err := httpx.DecodeJSON(c, &req, httpx.CodeValidationFailed); err != nil {
		return err
	}
	if _, err := mail.ParseAddress(req.Email); err != nil || strings.ContainsAny(req.Email, "<> ") {
		return httpx.Validation(httpx.FieldProblem{Field: "email", Problem: "must be an email address"})
	}
	org := utils.CopyString(c.Params("org"))
	if _, err := a.t.Org(c.UserContext(), org); err != nil {
		return toAPI(err)
	}
	if err := a.t.Suppress(c.UserContext(), org, req.Email, "admin", req.Reason); err != nil {
		return err
	}
	return c.Status(fiber.StatusCreated).JSON(fiber.Map{"email": strings.ToLower(req.Email)})
}

func (a *API) removeSuppression(c *fiber.Ctx) error {
	if err := a.t.Unsuppress(c.UserContext(), c.Params("org"), c.Params("email")); err != nil {
		return toAPI(err)
	}
	return c.SendStatus(fiber.StatusNoContent)
}
