package forms

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"strconv"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/utils"

	"github.com/gatehouse-dev/gatehouse/edge/auth"
	"github.com/gatehouse-dev/gatehouse/edge/httpx"
)

// Payload limits of decisions.md section 5.
const (
	MaxJSONBytes      = 1 << 20
	MaxMultipartBytes = 10 << 20
)

// Rule is the key rule of both public routes: a project-scoped publishable key for forms.
var Rule = auth.Rule{Product: "forms", PublishableOnly: true, NeedProject: true}

// Product mounts the Forms routes at {public_url}/forms and the inbox under /admin/v1.
type Product struct {
	svc     *Service
	auth    *auth.Authenticator
	cursors *httpx.Cursors
	proxies proxies
}

// NewProduct returns the product over its service. trustedProxies (config trusted_proxies:
// IPs or CIDRs) are the peers whose X-Forwarded-For names the submitter.
func NewProduct(svc *Service, a *auth.Authenticator, cursors *httpx.Cursors, trustedProxies []string) *Product {
	return &Product{svc: svc, auth: a, cursors: cursors, proxies: parseProxies(trustedProxies)}
}

// Segment is the product's path segment: {forms_base_url} is {public_url}/forms.
func (p *Product) Segment() string { return "forms" }

// Mount registers GET /forms/:slug and POST /forms/:slug/submit (the interface's paths under
// {forms_base_url}).
func (p *Product) Mount(r fiber.Router) {
	p.auth.Handle(r, http.MethodGet, "/forms/:slug", Rule, p.definition)
	p.auth.Handle(r, http.MethodPost, "/forms/:slug/submit", Rule, p.submit)
}

// MountAdmin registers the inbox routes under /admin/v1.
func (p *Product) MountAdmin(r fiber.Router) {
	r.Get("/projects/:project/forms/:slug/submissions", p.inbox)
	r.Get("/projects/:project/forms/:slug/submissions/:id", p.submission)
	r.Get("/projects/:project/forms/:slug/submissions/:id/files/:n", p.file)
}

func (p *Product) definition(c *fiber.Ctx) error {
	k := auth.KeyOf(c)
	d, err := p.svc.Definition(c.UserContext(), k.Project, c.Params("slug"))
	if err != nil {
		return err
	}
	return c.JSON(d)
}

func (p *Product) submit(c *fiber.Ctx) error {
	k := auth.KeyOf(c)
	slug := utils.CopyString(c.Params("slug"))
	adm, err := p.svc.Admit(c.UserContext(), k.Project, slug, k.Hash)
	if err != nil {
		return err
	}
	mediaType, params, _ := mime.ParseMediaType(c.Get(fiber.HeaderContentType))
	limit := MaxJSONBytes
	if mediaType == fiber.MIMEMultipartForm {
		limit = MaxMultipartBytes
	}
	// The raw body: compressed bodies never get here (the edge refuses them with 415).
	body := c.Request().Body()
	if c.Request().Header.ContentLength() > limit || len(body) > limit {
		p.svc.Refuse(httpx.ErrTooLarge)
		return httpx.ErrTooLarge
	}
	in := Input{
		Project:   k.Project,
		Slug:      slug,
		KeyHash:   k.Hash,
		IP:        p.proxies.clientIP(c.Context().RemoteIP().String(), utils.CopyString(c.Get(fiber.HeaderXForwardedFor))),
		UserAgent: utils.CopyString(c.Get(fiber.HeaderUserAgent)),
	}
	switch mediaType {
	case fiber.MIMEMultipartForm:
		in.FromForm = true
		in.Values, in.Files, err = decodeMultipart(body, params["boundary"])
	case fiber.MIMEApplicationForm:
		in.FromForm = true
		in.Values = map[string]any{}
		c.Request().PostArgs().VisitAll(func(key, val []byte) { addValue(in.Values, string(key), string(val)) })
	default:
		if body, err = httpx.JSONBody(c, CodeInvalidJSON); err == nil {
			in.Values, err = decodeJSON(body)
		}
	}
	if err != nil {
		p.svc.Refuse(err)
		return err
	}
	r, err := p.svc.SubmitAdmitted(c.UserContext(), adm, in)
	if err != nil {
		return err
	}
	return c.Status(fiber.StatusCreated).JSON(r)
}

// decodeJSON reads the canonical {"data":{...}} or the flat {...} body. A token may sit beside
// "data" or inside it.
func decodeJSON(body []byte) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, invalidJSON(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, invalidJSON(errors.New("data after the JSON value"))
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, httpx.Validation(httpx.FieldProblem{Field: "body", Problem: "must be a JSON object"})
	}
	data, ok := obj["data"].(map[string]any)
	if !ok {
		return obj, nil
	}
	for k := range obj {
		if k != "data" && !isCaptchaName(k) {
			return obj, nil // a flat body with a field named data
		}
	}
	for k, v := range obj {
		if k != "data" {
			if _, dup := data[k]; !dup {
				data[k] = v
			}
		}
	}
	return data, nil
}

// decodeMultipart reads text parts as values and file parts as FileParts held in memory
// (the body is at most 10 MB and already in memory).
func decodeMultipart(body []byte, boundary string) (map[string]any, map[string][]FilePart, error) {
	bad := func(err error) error {
		e := httpx.Validation(httpx.FieldProblem{Field: "body", Problem: "is not a well-formed multipart/form-data body"})
		e.Err = err
		return e
	}
	if boundary == "" {
		return nil, nil, bad(errors.New("no boundary"))
	}
	mr := multipart.NewReader(bytes.NewReader(body), boundary)
	values := map[string]any{}
	files := map[string][]FilePart{}
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, nil, bad(err)
		}
		name := part.FormName()
		raw, err := io.ReadAll(io.LimitReader(part, MaxMultipartBytes+1))
		part.Close()
		if err != nil {
			return nil, nil, bad(err)
		}
		if name == "" {
			continue
		}
		filename := part.FileName()
		if filename == "" {
			addValue(values, name, string(raw))
			continue
		}
		if len(raw) > MaxFileBytes {
			return nil, nil, httpx.ErrTooLarge
		}
		ctype, _, _ := mime.ParseMediaType(part.Header.Get("Content-Type"))
		if ctype == "" || ctype == "application/octet-stream" {
			ctype, _, _ = mime.ParseMediaType(http.DetectContentType(raw))
		}
		head := raw
		if len(head) > 512 {
			head = head[:512]
		}
		data := raw
		files[name] = append(files[name], FilePart{
			Filename: filename, ContentType: ctype, Size: int64(len(raw)), Head: head,
			Open: func() (ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil },
		})
	}
	return values, files, nil
}

// addValue records a text value; a repeated name becomes a list.
func addValue(m map[string]any, k, v string) {
	switch old := m[k].(type) {
	case nil:
		m[k] = v
	case string:
		m[k] = []string{old, v}
	case []string:
		m[k] = append(old, v)
	}
}

func inboxScope(project, slug string) string { return "forms-inbox/" + project + "/" + slug }

func (p *Product) inbox(c *fiber.Ctx) error {
	project, slug := utils.CopyString(c.Params("project")), utils.CopyString(c.Params("slug"))
	limit, err := httpx.QueryInt(c, "limit", 25, 1, 100)
	if err != nil {
		return err
	}
	after := ""
	if cur := c.Query("cursor"); cur != "" {
		raw, err := p.cursors.Decode(inboxScope(project, slug), cur)
		if err != nil {
			return err
		}
		after = string(raw)
	}
	page, err := p.svc.Inbox(c.UserContext(), project, slug, after, limit)
	if err != nil {
		return err
	}
	next := ""
	if page.Next != "" {
		next = p.cursors.Encode(inboxScope(project, slug), []byte(page.Next))
	}
	return c.JSON(httpx.NewList(page.Items, next))
}

func (p *Product) submission(c *fiber.Ctx) error {
	project, slug := c.Params("project"), c.Params("slug")
	sub, err := p.svc.Get(c.UserContext(), project, slug, c.Params("id"))
	if err != nil {
		return err
	}
	for i := range sub.Files {
		sub.Files[i].URL = p.svc.fileURL(project, slug, sub.ID, i)
	}
	return c.JSON(sub)
}

func (p *Product) file(c *fiber.Ctx) error {
	n, err := strconv.Atoi(c.Params("n"))
	if err != nil {
		return ErrSubmissionNotFound
	}
	f, obj, err := p.svc.OpenFile(c.UserContext(), c.Params("project"), c.Params("slug"), c.Params("id"), n)
	if err != nil {
		return err
	}
	c.Set(fiber.HeaderContentType, f.ContentType)
	c.Set(fiber.HeaderXContentTypeOptions, "nosniff")
	c.Set(fiber.HeaderContentDisposition, `attachment; filename="`+safeName(f.Name)+`"`)
	return c.SendStream(obj, int(obj.Size()))
}
