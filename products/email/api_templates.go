package email

import (
	"strings"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/utils"

	"github.com/gatehouse-dev/gatehouse/edge/apierr"
	"github.com/gatehouse-dev/gatehouse/edge/httpx"
	"github.com/gatehouse-dev/gatehouse/edge/strictjson"
)

// mountTemplates registers the dashboard's template routes (decisions.md 8.2) under
// /admin/v1/projects/{project}/email/templates. The admin guard keeps a member's session to
// its own org's projects.
func (a *API) mountTemplates(r fiber.Router) {
	const base = "/projects/:project/email/templates"
	limit := httpx.BodyLimit(MaxTemplateBody*2 + 64<<10)
	r.Get(base, a.listTemplates)
	r.Get(base+"/:slug", a.getTemplate)
	r.Put(base+"/:slug", limit, a.putTemplate)
	r.Delete(base+"/:slug", a.deleteTemplate)
	r.Post(base+"/:slug/preview", limit, a.previewTemplate)
}

// adminProject copies the route's project and answers 404 PROJECT_NOT_FOUND when it does not exist.
func (a *API) adminProject(c *fiber.Ctx) (string, error) {
	project := utils.CopyString(c.Params("project"))
	if _, err := a.svc.tenants.Project(c.UserContext(), project); err != nil {
		return "", ErrProjectNotFound
	}
	return project, nil
}

// strictBody decodes a strict JSON object body into v, refusing unknown fields.
func strictBody(c *fiber.Ctx, v any) error {
	return httpx.DecodeJSONWith(c, v, strictjson.Options{UseNumber: true, DisallowUnknownFields: true}, apierr.CodeValidationFailed,
		func(err error) error {
			if name, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
				return invalid(strings.Trim(name, `"`), "is not a field of this request")
			}
			return strictjson.DecodeError(err)
		})
}

func (a *API) listTemplates(c *fiber.Ctx) error {
	project, err := a.adminProject(c)
	if err != nil {
		return err
	}
	list, err := a.svc.Templates(c.UserContext(), project)
	if err != nil {
		return err
	}
	return c.JSON(httpx.NewList(list, ""))
}

func (a *API) getTemplate(c *fiber.Ctx) error {
	project, err := a.adminProject(c)
	if err != nil {
		return err
	}
	t, err := a.svc.GetTemplate(c.UserContext(), project, utils.CopyString(c.Params("slug")))
	if err != nil {
		return err
	}
	return c.JSON(t)
}

// putTemplate creates or replaces a template from {"subject","body","text"?}: 201 when new, 200
// when replaced; the answer is the stored template.
func (a *API) putTemplate(c *fiber.Ctx) error {
	project, err := a.adminProject(c)
	if err != nil {
		return err
	}
	var req struct {
		Subject string `json:"subject"`
		Body    string `json:"body"`
		Text    string `json:"text"`
	}
	if err := strictBody(c, &req); err != nil {
		return err
	}
	t := Template{Slug: utils.CopyString(c.Params("slug")), Subject: req.Subject, Body: req.Body, Text: req.Text}
	created, err := a.svc.PutTemplate(c.UserContext(), project, t)
	if err != nil {
		return err
	}
	status := fiber.StatusOK
	if created {
		status = fiber.StatusCreated
	}
	return c.Status(status).JSON(t)
}

func (a *API) deleteTemplate(c *fiber.Ctx) error {
	project, err := a.adminProject(c)
	if err != nil {
		return err
	}
	if err := a.svc.DeleteTemplate(c.UserContext(), project, utils.CopyString(c.Params("slug"))); err != nil {
		return err
	}
	return c.SendStatus(fiber.StatusNoContent)
}

// previewTemplate renders a template with {"variables":{...}} → {"subject","html","text"}. With
// "template":{"subject","body","text"?} it renders that text instead of the stored template (the
// dashboard's editor previews what is typed, before it is saved; the slug need not exist yet).
func (a *API) previewTemplate(c *fiber.Ctx) error {
	project, err := a.adminProject(c)
	if err != nil {
		return err
	}
	var req struct {
		Variables map[string]any `json:"variables"`
		Template  *struct {
			Subject string `json:"subject"`
			Body    string `json:"body"`
			Text    string `json:"text"`
		} `json:"template"`
	}
	if err := strictBody(c, &req); err != nil {
		return err
	}
	vars, bad, err := ParseVars(req.Variables)
	if err != nil {
		return invalid("variables."+bad, "must be a string, number or boolean")
	}
	slug := utils.CopyString(c.Params("slug"))
	var p Preview
	if t := req.Template; t != nil {
		p, err = a.svc.PreviewDraft(Template{Slug: slug, Subject: t.Subject, Body: t.Body, Text: t.Text}, vars)
	} else {
		p, err = a.svc.PreviewTemplate(c.UserContext(), project, slug, vars)
	}
	if err != nil {
		return err
	}
	return c.JSON(p)
}
