package files

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/utils"

	"github.com/gatehouse-dev/gatehouse/edge"
	"github.com/gatehouse-dev/gatehouse/edge/apierr"
	"github.com/gatehouse-dev/gatehouse/edge/auth"
	"github.com/gatehouse-dev/gatehouse/edge/blob"
	"github.com/gatehouse-dev/gatehouse/edge/cursor"
	"github.com/gatehouse-dev/gatehouse/edge/httpx"
	"github.com/gatehouse-dev/gatehouse/edge/strictjson"
)

// API is the File-asset product mounted at {files_base_url}.
type API struct {
	svc     *Service
	auth    *auth.Authenticator
	cursors *cursor.Cursors
}

// Host is the asset host ({asset_host}, mounted at {public_url}/cdn and routed by Host).
type Host struct {
	svc   *Service
	small *sync.Pool // send's read buffers of smallBody bytes
}

var (
	_ edge.Product      = (*API)(nil)
	_ edge.AdminProduct = (*API)(nil)
	_ edge.Product      = (*Host)(nil)
)

// NewAPI returns the product's API routes over svc, guarded by a; cursors signs the list's
// page cursors.
func NewAPI(svc *Service, a *auth.Authenticator, cursors *cursor.Cursors) *API {
	return &API{svc: svc, auth: a, cursors: cursors}
}

// NewHost returns the asset host over svc.
func NewHost(svc *Service) *Host {
	return &Host{svc: svc, small: &sync.Pool{New: func() any { b := make([]byte, smallBody); return &b }}}
}

// Segment implements edge.Product.
func (a *API) Segment() string { return "files" }

// Segment implements edge.Product.
func (h *Host) Segment() string { return "cdn" }

// Mount registers the interface's five routes and the signed PUT.
func (a *API) Mount(r fiber.Router) {
	secret := auth.Rule{Product: "files", SecretOnly: true, Bearer: true}
	public := auth.Rule{Product: "files", Bearer: true}
	a.auth.Handle(r, http.MethodPost, "/upload/presigned", secret, httpx.BodyLimit(64<<10), a.presign)
	a.auth.Handle(r, http.MethodPost, "/upload/complete", secret, httpx.BodyLimit(64<<10), a.complete)
	a.auth.Handle(r, http.MethodGet, "/check-duplicate", public, a.duplicate)
	a.auth.Handle(r, http.MethodGet, "/assets", public, a.list)
	a.auth.Handle(r, http.MethodGet, "/assets/:id", public, a.get)
	a.auth.Handle(r, http.MethodPost, "/assets/:id/variant-url", secret, httpx.BodyLimit(64<<10), a.variantURL)
	r.Put("/upload/:id", a.put)
	r.Options("/upload/:id", func(c *fiber.Ctx) error {
		if !strings.HasPrefix(c.Params("id"), IDPrefix) {
			return apierr.ErrNotFound
		}
		c.Set(fiber.HeaderAccessControlAllowOrigin, "*")
		c.Set(fiber.HeaderAccessControlAllowMethods, "PUT, OPTIONS")
		c.Set(fiber.HeaderAccessControlAllowHeaders, "Content-Type")
		c.Set(fiber.HeaderAccessControlMaxAge, "600")
		return c.SendStatus(fiber.StatusNoContent)
	})
}

func scopeOf(c *fiber.Ctx) Scope {
	k := auth.KeyOf(c)
	return Scope{Org: k.Org, Project: k.Project}
}

// fields decodes a JSON object body into raw fields (VALIDATION_FAILED when it is not one).
func fields(c *fiber.Ctx) (map[string]json.RawMessage, error) {
	notObject := func(error) error {
		return apierr.Validation(apierr.FieldProblem{Field: "body", Problem: "must be a JSON object"})
	}
	var m map[string]json.RawMessage
	if err := httpx.DecodeJSONWith(c, &m, strictjson.Options{}, apierr.CodeValidationFailed, notObject); err != nil {
		return nil, err
	}
	if m == nil {
		return nil, notObject(nil)
	}
	return m, nil
}

// decodeField decodes m[name] into dst when present and not null, noting a type problem.
func decodeField(m map[string]json.RawMessage, name string, dst any, want string, probs *[]apierr.FieldProblem) bool {
	raw, ok := m[name]
	if !ok || string(raw) == "null" {
		return false
	}
	if err := json.Unmarshal(raw, dst); err != nil {
		*probs = append(*probs, apierr.FieldProblem{Field: name, Problem: "must be " + want})
		return false
	}
	return true
}

func (a *API) presign(c *fiber.Ctx) error {
	m, err := fields(c)
	if err != nil {
		return err
	}
	var req PresignRequest
	var probs []apierr.FieldProblem
	decodeField(m, "filename", &req.Filename, "a string", &probs)
	decodeField(m, "mimeType", &req.MimeType, "a string", &probs)
	decodeField(m, "size", &req.Size, "an integer (bytes)", &probs)
	decodeField(m, "folderId", &req.FolderID, "a string", &probs)
	if len(probs) > 0 {
		return apierr.Validation(probs...)
	}
	slot, err := a.svc.Presign(c.UserContext(), scopeOf(c), req)
	if err != nil {
		return err
	}
	// Without HTML escaping, so the uploadUrl's '&' reads as itself in raw output.
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(slot); err != nil {
		return err
	}
	c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSON)
	return c.Send(bytes.TrimRight(buf.Bytes(), "\n"))
}

func (a *API) complete(c *fiber.Ctx) error {
	m, err := fields(c)
	if err != nil {
		return err
	}
	var req CompleteRequest
	var probs []apierr.FieldProblem
	if !decodeField(m, "assetId", &req.AssetID, "a string", &probs) && len(probs) == 0 || req.AssetID == "" && len(probs) == 0 {
		probs = append(probs, apierr.FieldProblem{Field: "assetId", Problem: "is required"})
	}
	decodeField(m, "fileHash", &req.FileHash, "a string", &probs)
	var w, h int
	if decodeField(m, "width", &w, "an integer", &probs) {
		req.Width = &w
	}
	if decodeField(m, "height", &h, "an integer", &probs) {
		req.Height = &h
	}
	if len(probs) > 0 {
		return apierr.Validation(probs...)
	}
	asset, err := a.svc.Complete(c.UserContext(), scopeOf(c), req)
	if err != nil {
		return err
	}
	return c.JSON(fiber.Map{"id": asset.ID, "status": asset.Status})
}

func (a *API) duplicate(c *fiber.Ctx) error {
	id, ok, err := a.svc.Duplicate(c.UserContext(), scopeOf(c), utils.CopyString(c.Query("hash")))
	if err != nil {
		return err
	}
	return c.JSON(struct {
		IsDuplicate bool   `json:"isDuplicate"`
		AssetID     string `json:"assetId,omitempty"`
	}{ok, id})
}

func (a *API) list(c *fiber.Ctx) error { return a.listScope(c, scopeOf(c), false) }

func (a *API) listScope(c *fiber.Ctx, sc Scope, full bool) error {
	limit, err := httpx.QueryInt(c, "limit", 25, 1, 100)
	if err != nil {
		return err
	}
	category := utils.CopyString(c.Query("mimeCategory"))
	scope := "files/assets\x00" + sc.Org + "\x00" + sc.Project + "\x00" + category
	after := ""
	if cur := c.Query("cursor"); cur != "" {
		p, err := a.cursors.Decode(scope, cur)
		if err != nil {
			return err
		}
		after = string(p)
	}
	page, next, err := a.svc.List(c.UserContext(), sc, limit, after, category)
	if err != nil {
		return err
	}
	if next != "" {
		next = a.cursors.Encode(scope, []byte(next))
	}
	if full {
		items := make([]adminItem, len(page))
		for i, x := range page {
			if items[i], err = a.adminItem(c, x); err != nil {
				return err
			}
		}
		return c.JSON(httpx.NewList(items, next))
	}
	views := make([]View, len(page))
	for i, x := range page {
		views[i] = x.View(a.svc.AssetBase())
	}
	return c.JSON(httpx.NewList(views, next))
}

func (a *API) get(c *fiber.Ctx) error {
	asset, err := a.svc.Get(c.UserContext(), scopeOf(c), utils.CopyString(c.Params("id")))
	if err != nil {
		return err
	}
	return c.JSON(asset.View(a.svc.AssetBase()))
}

// put receives the bytes for a signed upload URL. No API key: the URL is the authorization.
// The body is read as a stream (the server runs with StreamRequestBody), never buffered whole.
func (a *API) put(c *fiber.Ctx) error {
	c.Set(fiber.HeaderAccessControlAllowOrigin, "*")
	id := utils.CopyString(c.Params("id"))
	query := string(c.Request().URI().QueryString())
	ctype := utils.CopyString(c.Get(fiber.HeaderContentType))
	clen := int64(c.Request().Header.ContentLength())
	if clen < 0 {
		clen = -1
	}
	var body io.Reader = c.Context().RequestBodyStream()
	if body == nil {
		body = bytes.NewReader(c.Body())
	}
	asset, err := a.svc.Upload(c.UserContext(), id, query, ctype, clen, body)
	if err != nil {
		// The rest of a refused body is not read: close the connection after the answer.
		c.Context().SetConnectionClose()
		return err
	}
	return c.JSON(fiber.Map{"id": asset.ID, "status": asset.Status})
}

// variantURL answers POST /assets/{id}/variant-url with {width, height, fit, format, quality}:
// {"url"} of the signed ad-hoc variant.
func (a *API) variantURL(c *fiber.Ctx) error {
	m, err := fields(c)
	if err != nil {
		return err
	}
	var o VariantOptions
	var probs []apierr.FieldProblem
	var w, h, q int
	if decodeField(m, "width", &w, "an integer", &probs) {
		o.Width = &w
	}
	if decodeField(m, "height", &h, "an integer", &probs) {
		o.Height = &h
	}
	if decodeField(m, "quality", &q, "an integer", &probs) {
		o.Quality = &q
	}
	decodeField(m, "fit", &o.Fit, "a string", &probs)
	decodeField(m, "format", &o.Format, "a string", &probs)
	for k := range m {
		switch k {
		case "width", "height", "quality", "fit", "format":
		default:
			probs = append(probs, apierr.FieldProblem{Field: k, Problem: "is not a variant option (width, height, fit, format, quality)"})
		}
	}
	if len(probs) > 0 {
		return apierr.Validation(probs...)
	}
	u, err := a.svc.VariantURL(c.UserContext(), scopeOf(c), utils.CopyString(c.Params("id")), o)
	if err != nil {
		return err
	}
	return c.JSON(fiber.Map{"url": u})
}

// Mount registers GET and HEAD /<org>/originals/<asset_id>/<filename> and the variants,
// /<org>/<variant>/<asset_id>/<filename>.
func (h *Host) Mount(r fiber.Router) {
	r.Get("/:org/originals/:id/:name", h.serve)
	r.Get("/:org/:variant/:id/:name", h.serveVariant)
}

// serve answers an asset's bytes with the headers of decisions.md: ETag, immutable caching,
// single byte ranges, nosniff, the stored type; SVGs with a CSP that blocks script.
func (h *Host) serve(c *fiber.Ctx) error {
	a, obj, err := h.svc.OpenPublic(c.UserContext(), c.Params("org"), c.Params("id"), c.Params("name"))
	if err != nil {
		return err
	}
	// A tenant domain (decisions.md 9.4) serves its own project's assets only.
	if p := httpx.HostProject(c); p != "" && a.Project != p {
		_ = obj.Close()
		return ErrAssetNotFound
	}
	return h.send(c, obj, a.MimeType, `"`+a.SHA256+`"`, a.CreatedAt)
}

// serveVariant answers a variant's bytes, made on the first request, with the headers of an
// original (decisions.md 9.3); format auto adds Vary: Accept. An SVG asset answers its original.
func (h *Host) serveVariant(c *fiber.Ctx) error {
	v, err := h.svc.OpenVariant(c.UserContext(), VariantRequest{
		Org: c.Params("org"), Segment: utils.CopyString(c.Params("variant")), ID: c.Params("id"),
		Name: c.Params("name"), Accept: utils.CopyString(c.Get(fiber.HeaderAccept)),
	})
	if err != nil {
		return err
	}
	if p := httpx.HostProject(c); p != "" && v.Asset.Project != p {
		_ = v.Object.Close()
		return ErrAssetNotFound
	}
	if v.Built == nil {
		return h.send(c, v.Object, v.Asset.MimeType, `"`+v.Asset.SHA256+`"`, v.Asset.CreatedAt)
	}
	if v.Vary {
		c.Set(fiber.HeaderVary, fiber.HeaderAccept)
	}
	return h.send(c, v.Object, v.Built.MimeType, `"`+v.Built.SHA256+`"`, v.Built.CreatedAt)
}

// send answers obj (which it closes) as an immutable asset of type mime.
func (h *Host) send(c *fiber.Ctx, obj blob.Object, mime, etag string, modified time.Time) error {
	size := obj.Size()
	c.Set(fiber.HeaderContentType, mime)
	c.Set(fiber.HeaderETag, etag)
	c.Set(fiber.HeaderCacheControl, "public, max-age=31536000, immutable")
	c.Set(fiber.HeaderXContentTypeOptions, "nosniff")
	c.Set(fiber.HeaderAcceptRanges, "bytes")
	c.Set(fiber.HeaderAccessControlAllowOrigin, "*")
	c.Set("Cross-Origin-Resource-Policy", "cross-origin")
	c.Set(fiber.HeaderLastModified, modified.UTC().Format(http.TimeFormat))
	if mime == "image/svg+xml" {
		c.Set(fiber.HeaderContentSecurityPolicy, "default-src 'none'; style-src 'unsafe-inline'; img-src data:; sandbox")
	}
	if inm := c.Get(fiber.HeaderIfNoneMatch); inm != "" && etagMatch(inm, etag) {
		obj.Close()
		return c.SendStatus(fiber.StatusNotModified)
	}
	start, length, status := int64(0), size, 200
	if rh := c.Get(fiber.HeaderRange); rh != "" {
		if ir := c.Get(fiber.HeaderIfRange); ir == "" || ir == etag {
			start, length, status = ParseRange(rh, size)
		}
	}
	switch status {
	case 416:
		obj.Close()
		c.Set(fiber.HeaderContentRange, "bytes */"+strconv.FormatInt(size, 10))
		return c.SendStatus(fiber.StatusRequestedRangeNotSatisfiable)
	case 206:
		c.Set(fiber.HeaderContentRange, "bytes "+strconv.FormatInt(start, 10)+"-"+strconv.FormatInt(start+length-1, 10)+"/"+strconv.FormatInt(size, 10))
		if _, err := obj.Seek(start, io.SeekStart); err != nil {
			obj.Close()
			return err
		}
	}
	c.Status(status)
	if c.Method() == fiber.MethodHead {
		obj.Close()
		c.Response().Header.SetContentLength(int(length))
		return nil
	}
	if length <= smallBody {
		// Read at once and answered from the response's own buffer: one read, and the
		// headers and body written together, instead of a stream copied in 4 KB pieces.
		buf := h.small.Get().(*[]byte)
		defer h.small.Put(buf)
		_, err := io.ReadFull(obj, (*buf)[:length])
		obj.Close()
		if err != nil {
			return err
		}
		c.Response().SetBody((*buf)[:length])
		return nil
	}
	c.Context().SetBodyStream(readCloser{Reader: io.LimitReader(obj, length), Closer: obj}, int(length))
	return nil
}

// smallBody is the largest answer send reads whole (thumbnails, small originals); larger ones
// are streamed.
const smallBody = 64 << 10

func etagMatch(header, etag string) bool {
	for _, t := range strings.Split(header, ",") {
		t = strings.TrimPrefix(strings.TrimSpace(t), "W/")
		if t == etag || t == "*" {
			return true
		}
	}
	return false
}

type readCloser struct {
	io.Reader
	io.Closer
}
