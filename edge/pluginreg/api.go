package pluginreg

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/utils"

	"github.com/gatehouse-dev/gatehouse/edge/apierr"
	"github.com/gatehouse-dev/gatehouse/edge/auth"
	"github.com/gatehouse-dev/gatehouse/edge/httpx"
	"github.com/gatehouse-dev/gatehouse/edge/tenancy"
)

// MountAdmin registers POST /admin/v1/plugins (module upload), GET
// /projects/{project}/plugin-modules (the uploaded modules), PUT and DELETE
// /projects/{project}/plugins/{name} (a whole registration), and POST .../plugins/{name}/hooks
// and DELETE .../plugins/{name}/hooks/{hook} (attach a module to one hook, detach it).
// The token check is the server's.
func (r *Registry) MountAdmin(rt fiber.Router) {
	rt.Post("/plugins", httpx.BodyLimit(MaxModuleBytes), r.uploadModule)
	rt.Get("/projects/:project/plugin-modules", r.listModules)
	rt.Put("/projects/:project/plugins/:name", httpx.BodyLimit(64<<10), r.putPlugin)
	rt.Delete("/projects/:project/plugins/:name", r.deletePlugin)
	rt.Post("/projects/:project/plugins/:name/hooks", httpx.BodyLimit(4<<10), r.attach)
	rt.Delete("/projects/:project/plugins/:name/hooks/:hook", r.detach)
}

// attach answers POST /projects/{project}/plugins/{name}/hooks {"hook","module"?}: the hook is
// added to the registration (created to run module, by default the module of the same name,
// when there is none); 200 with the registration.
func (r *Registry) attach(c *fiber.Ctx) error {
	var req struct {
		Hook   string `json:"hook"`
		Module string `json:"module"`
	}
	if err := httpx.DecodeJSON(c, &req, apierr.CodeValidationFailed); err != nil {
		return err
	}
	name := utils.CopyString(c.Params("name"))
	if req.Module == "" {
		req.Module = name
	}
	p, err := r.Attach(c.UserContext(), utils.CopyString(c.Params("project")), name, req.Module, req.Hook)
	if err != nil {
		return apiError(err)
	}
	return c.JSON(p)
}

// detach answers DELETE /projects/{project}/plugins/{name}/hooks/{hook}: 204, or 404.
func (r *Registry) detach(c *fiber.Ctx) error {
	err := r.Detach(c.UserContext(), utils.CopyString(c.Params("project")), utils.CopyString(c.Params("name")), utils.CopyString(c.Params("hook")))
	if err != nil {
		return apiError(err)
	}
	return c.SendStatus(fiber.StatusNoContent)
}

// listModules answers the project's uploaded modules, one page, in name order.
func (r *Registry) listModules(c *fiber.Ctx) error {
	project := utils.CopyString(c.Params("project"))
	if _, err := r.ten.Project(c.UserContext(), project); err != nil {
		return apiError(err)
	}
	ms, err := r.Modules(c.UserContext(), project)
	if err != nil {
		return err
	}
	return c.JSON(httpx.NewList(ms, ""))
}

// putPlugin creates (201) or replaces (200) a registration from its tenants-document form
// without the name (the path's): {"module","hooks",...}.
func (r *Registry) putPlugin(c *fiber.Ctx) error {
	var p Plugin
	if err := httpx.DecodeJSON(c, &p, apierr.CodeValidationFailed); err != nil {
		return err
	}
	p.Name = utils.CopyString(c.Params("name"))
	created, err := r.PutPlugin(c.UserContext(), utils.CopyString(c.Params("project")), p)
	if err != nil {
		return apiError(err)
	}
	status := fiber.StatusOK
	if created {
		status = fiber.StatusCreated
	}
	return c.Status(status).JSON(p)
}

// deletePlugin removes a registration: 204, or 404.
func (r *Registry) deletePlugin(c *fiber.Ctx) error {
	if err := r.DeletePlugin(c.UserContext(), utils.CopyString(c.Params("project")), utils.CopyString(c.Params("name"))); err != nil {
		return apiError(err)
	}
	return c.SendStatus(fiber.StatusNoContent)
}

// uploadModule stores a Wasm module sent as the raw body of POST /plugins?project=P&name=N.
// A tenants-document plugin whose module is N uses it; registered plugins swap to it at once.
func (r *Registry) uploadModule(c *fiber.Ctx) error {
	project, name := utils.CopyString(c.Query("project")), utils.CopyString(c.Query("name"))
	if project == "" || name == "" {
		return apierr.Validation(apierr.FieldProblem{Field: "project,name", Problem: "both query parameters are required"})
	}
	// A member's session may upload only to a project of its own org; any other project (of
	// another org, or none) is an operator's act: 403 FORBIDDEN (decisions.md 8.2).
	if adm := auth.AdminOf(c); adm == nil || !adm.Operator {
		p, err := r.ten.Project(c.UserContext(), project)
		if err != nil || !adm.SeesOrg(p.Org) {
			return auth.ErrOperatorOnly
		}
	}
	module := bytes.Clone(c.Body())
	if err := r.PutModule(c.UserContext(), project, name, module); err != nil {
		return apiError(err)
	}
	sum := sha256.Sum256(module)
	return c.Status(fiber.StatusCreated).JSON(fiber.Map{"project": project, "name": name, "size": len(module), "sha256": hex.EncodeToString(sum[:])})
}

// CodePluginRefused answers an apply or upload whose plugin module the host refuses
// (decisions.md 8.5); the message and details carry the reason.
const CodePluginRefused = "PLUGIN_REFUSED"

// RefusedAPIError renders a refusal of the plugin host as 400 PLUGIN_REFUSED with one detail
// per refused entry.
func RefusedAPIError(refused *tenancy.RefusedError) error {
	e := apierr.New(400, CodePluginRefused, "plugin refused", refused)
	for _, p := range refused.Problems {
		e.Details = append(e.Details, apierr.FieldProblem{Field: p.Path, Problem: p.Message})
	}
	if len(e.Details) > 0 {
		e.Message = "plugin refused: " + e.Details[0].Field + ": " + e.Details[0].Problem
	}
	return e
}

// apiError maps the registry's errors to API errors.
func apiError(err error) error {
	var inv *tenancy.InvalidError
	var refused *tenancy.RefusedError
	switch {
	case errors.As(err, &refused):
		return RefusedAPIError(refused)
	case errors.As(err, &inv):
		e := apierr.Validation()
		e.Message = inv.Error()
		for _, p := range inv.Problems {
			e.Details = append(e.Details, apierr.FieldProblem{Field: p.Path, Problem: p.Message})
		}
		return e
	case errors.Is(err, tenancy.ErrNotFound):
		return apierr.New(404, apierr.CodeNotFound, "no such entity", err)
	case errors.Is(err, ErrNotFound):
		return apierr.New(404, apierr.CodeNotFound, "no such plugin in this project", err)
	case errors.Is(err, ErrTooLarge):
		return apierr.ErrTooLarge
	case errors.Is(err, ErrNotWasm):
		return apierr.Validation(apierr.FieldProblem{Field: "body", Problem: err.Error()})
	}
	return err
}
