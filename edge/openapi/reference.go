package openapi

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"strings"

	"github.com/gatehouse-dev/gatehouse/edge/httpx"
	"github.com/gofiber/fiber/v2"
)

// referenceFS is the browsable reference page: index.html and Redoc's standalone bundle
// (npm package redoc, bundles/redoc.standalone.js, fetched by `make openapi-reference` and
// committed, so the Go build never needs npm and the page contacts no other host).
//
//go:embed reference/index.html reference/redoc.standalone.js
var referenceFS embed.FS

// referenceCSP keeps the page to the gateway's own origin: Redoc styles with inline style
// elements, builds its search worker from a blob: URL and draws data: images.
const referenceCSP = "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; " +
	"font-src 'self' data:; connect-src 'self'; worker-src 'self' blob:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// page is one embedded file of the reference, with its gzip form and ETag.
type page struct {
	body, gz []byte
	ctype    string
	etag     string
}

// Reference serves the reference page at /docs/.
type Reference struct {
	index, script page
}

// NewReference reads the embedded page and compresses it once.
func NewReference() (*Reference, error) {
	index, err := load("reference/index.html", "text/html; charset=utf-8")
	if err != nil {
		return nil, err
	}
	script, err := load("reference/redoc.standalone.js", "text/javascript; charset=utf-8")
	if err != nil {
		return nil, err
	}
	return &Reference{index: index, script: script}, nil
}

func load(name, ctype string) (page, error) {
	body, err := referenceFS.ReadFile(name)
	if err != nil {
		return page{}, err
	}
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
	if err != nil {
		return page{}, err
	}
	if _, err := zw.Write(body); err != nil {
		return page{}, err
	}
	if err := zw.Close(); err != nil {
		return page{}, err
	}
	sum := sha256.Sum256(body)
	return page{body: body, gz: buf.Bytes(), ctype: ctype, etag: `"` + hex.EncodeToString(sum[:8]) + `"`}, nil
}

// Mount registers GET /docs (a redirect), /docs/ and /docs/redoc.standalone.js on r.
func (ref *Reference) Mount(r fiber.Router) {
	r.Get("/docs", func(c *fiber.Ctx) error {
		if strings.HasSuffix(c.Path(), "/") {
			return ref.serve(c, ref.index)
		}
		return c.Redirect(c.Path()+"/", fiber.StatusMovedPermanently)
	})
	r.Get("/docs/redoc.standalone.js", func(c *fiber.Ctx) error { return ref.serve(c, ref.script) })
}

func (ref *Reference) serve(c *fiber.Ctx, p page) error {
	c.Set(fiber.HeaderCacheControl, "no-cache")
	c.Set(fiber.HeaderXContentTypeOptions, "nosniff")
	c.Set(fiber.HeaderContentSecurityPolicy, referenceCSP)
	c.Set("Referrer-Policy", "no-referrer")
	return httpx.SendStatic(c, p.body, p.gz, p.etag, p.ctype)
}
