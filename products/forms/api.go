package forms

import (
	"bytes"
	"errors"
	"io"
	"mime"
	"net/http"
	"strconv"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/utils"

	"github.com/gatehouse-dev/gatehouse/edge"
	"github.com/gatehouse-dev/gatehouse/edge/apierr"
	"github.com/gatehouse-dev/gatehouse/edge/auth"
	"github.com/gatehouse-dev/gatehouse/edge/cursor"
	"github.com/gatehouse-dev/gatehouse/edge/httpx"
	"github.com/gatehouse-dev/gatehouse/edge/strictjson"
)

// Payload limits of decisions.md section 5.
const (
	MaxJSONBytes      = 1 << 20
	MaxMultipartBytes = 10 << 20
)

// Rule is the key rule of both public routes: a project-scoped publishable key for forms.
var Rule = auth.Rule{Product: "forms", PublishableOnly: true, NeedProject: true}

// API mounts the Forms routes at {public_url}/forms and the inbox under /admin/v1.
type API struct {
	svc     *Service
	auth    *auth.Authenticator
	cursors *cursor.Cursors
	proxies proxies
}

var (
	_ edge.Product      = (*API)(nil)
	_ edge.AdminProduct = (*API)(nil)
)

// NewAPI returns the forms routes over svc. trustedProxies (config trusted_proxies:
// IPs or CIDRs) are the peers whose X-Forwarded-For names the submitter.
func NewAPI(svc *Service, a *auth.Authenticator, cursors *cursor.Cursors, trustedProxies []string) *API {
	return &API{svc: svc, auth: a, cursors: cursors, proxies: parseProxies(trustedProxies)}
}

// Segment is the product's path segment: {forms_base_url} is {public_url}/forms.
func (p *API) Segment() string { return "forms" }

// Mount registers GET /forms/:slug and POST /forms/:slug/submit (the interface's paths under
// {forms_base_url}).
func (p *API) Mount(r fiber.Router) {
	p.auth.Handle(r, http.MethodGet, "/forms/:slug", Rule, p.definition)
	p.auth.Handle(r, http.MethodPost, "/forms/:slug/submit", Rule, p.submit)
}

// MountAdmin registers the form definitions list and the inbox routes under /admin/v1.
func (p *API) MountAdmin(r fiber.Router) {
	r.Get("/projects/:project/forms", p.forms)
	r.Get("/projects/:project/forms/:slug/submissions", p.inbox)
	r.Get("/projects/:project/forms/:slug/submissions/:id", p.submission)
	r.Get("/projects/:project/forms/:slug/submissions/:id/files/:n", p.file)
	r.Delete("/projects/:project/forms/:slug/submissions/:id", p.deleteSubmission)
}

func (p *API) definition(c *fiber.Ctx) error {
	k := auth.KeyOf(c)
	d, err := p.svc.Definition(c.UserContext(), k.Project, c.Params("slug"))
	if err != nil {
		return err
	}
	return c.JSON(d)
}

func (p *API) submit(c *fiber.Ctx) error {
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
	// Compressed bodies never get here (the edge refuses them with 415). The server streams
	// request bodies: the body is read here, through a limit, never buffered whole by fasthttp.
	var raw io.Reader = c.Context().RequestBodyStream()
	if raw == nil {
		raw = bytes.NewReader(c.Body())
	}
	if c.Request().Header.ContentLength() > limit {
		p.svc.Refuse(apierr.ErrTooLarge)
		discard(raw, 2*limit)
		return apierr.ErrTooLarge
	}
	body := &limitedBody{r: raw, left: int64(limit)}
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
		var sp *Spool
		sp, err = p.svc.decodeMultipart(body, params["boundary"], adm)
		if sp != nil {
			defer sp.Remove()
			in.Values, in.Files = sp.Values, sp.Files
		}
	case fiber.MIMEApplicationForm:
		in.FromForm = true
		var b []byte
		if b, err = readBody(body); err == nil {
			in.Values, err = decodeURLEncoded(c, b)
		}
	default:
		var b []byte
		if err = httpx.JSONContentType(c); err == nil {
			if b, err = readBody(body); err == nil {
				in.Values, err = decodeJSON(b)
			}
		}
	}
	if err != nil {
		p.svc.Refuse(err)
		discard(raw, 2*limit)
		return err
	}
	r, err := p.svc.SubmitAdmitted(c.UserContext(), adm, in)
	if err != nil {
		return err
	}
	return c.Status(fiber.StatusCreated).JSON(r)
}

// limitedBody reads at most left bytes of a body and fails with 413 past them (a chunked body
// has no declared length to refuse up front).
type limitedBody struct {
	r    io.Reader
	left int64
}

func (l *limitedBody) Read(p []byte) (int, error) {
	if l.left <= 0 {
		var one [1]byte
		if n, _ := io.ReadFull(l.r, one[:]); n > 0 {
			return 0, apierr.ErrTooLarge
		}
		return 0, io.EOF
	}
	if int64(len(p)) > l.left {
		p = p[:l.left]
	}
	n, err := l.r.Read(p)
	l.left -= int64(n)
	return n, err
}

// discard reads and drops what is left of a refused body, up to max bytes, so the client (still
// sending) reads the answer rather than a connection reset; the edge closes the connection
// when more is left.
func discard(body io.Reader, max int) {
	_, _ = io.Copy(io.Discard, io.LimitReader(body, int64(max)))
}

// readBody reads a whole (limited) JSON or urlencoded body.
func readBody(r io.Reader) ([]byte, error) {
	raw, err := io.ReadAll(r)
	var he *apierr.Error
	if errors.As(err, &he) {
		return nil, he
	}
	if err != nil {
		return nil, apierr.Validation(apierr.FieldProblem{Field: "body", Problem: "could not be read"})
	}
	return raw, nil
}

// decodeURLEncoded parses an application/x-www-form-urlencoded body with fasthttp's parser
// (the body is handed back to the request). A body that is a JSON object or array is refused
// with a hint: it is what `curl -d '{"data":...}'` sends, whose default type is urlencoded.
func decodeURLEncoded(c *fiber.Ctx, raw []byte) (map[string]any, error) {
	if t := bytes.TrimSpace(raw); len(t) > 0 && (t[0] == '{' || t[0] == '[') {
		e := apierr.Validation(apierr.FieldProblem{Field: "body",
			Problem: "is JSON sent as application/x-www-form-urlencoded: send it with Content-Type: application/json"})
		e.Message = "the body is JSON but the Content-Type is application/x-www-form-urlencoded (curl -d's default): send it with the header Content-Type: application/json"
		return nil, e
	}
	c.Request().SetBodyRaw(raw)
	values := map[string]any{}
	c.Request().PostArgs().VisitAll(func(key, val []byte) { addValue(values, string(key), string(val)) })
	return values, nil
}

// decodeJSON reads the canonical {"data":{...}} or the flat {...} body. A token may sit beside
// "data" or inside it.
func decodeJSON(body []byte) (map[string]any, error) {
	var v any
	if err := strictjson.DecodeWith(body, &v, strictjson.Options{UseNumber: true}, CodeInvalidJSON, invalidJSON); err != nil {
		return nil, err
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, apierr.Validation(apierr.FieldProblem{Field: "body", Problem: "must be a JSON object"})
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

func (p *API) inbox(c *fiber.Ctx) error {
	if wantsCSV(c) {
		return p.inboxCSV(c)
	}
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

func (p *API) submission(c *fiber.Ctx) error {
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

func (p *API) file(c *fiber.Ctx) error {
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
