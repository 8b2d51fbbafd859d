// Package embedhost serves the browser side of forms on {embed_host}: forms.js (the drop-in
// script), forms.css, and f/{slug}?key=pk_live_... (a complete HTML page for an iframe). The
// bundles are built by sdk-js/packages/forms-embed (esbuild) into assets/ and committed; they
// are embedded here with go:embed, so the Go build never needs npm.
//
// On a project's own domain serving embed (decisions.md 9.4) the page accepts only that
// project's publishable keys, as the API does on a tenant domain.
package embedhost

import (
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"html/template"
	"regexp"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/gatehouse-dev/gatehouse/edge/apierr"
	"github.com/gatehouse-dev/gatehouse/edge/auth"
	"github.com/gatehouse-dev/gatehouse/edge/httpx"
)

//go:embed assets/forms.js
var formsJS []byte

//go:embed assets/forms.css
var formsCSS []byte

// Options configures New.
type Options struct {
	// PublicURL is the gateway's public URL; the script calls {PublicURL}/forms.
	PublicURL string
	// EmbedURL is the embed host's own base URL ({public_url}/embed when empty).
	EmbedURL string
	// Auth checks the page's key on a tenant domain (its project must be the domain's); nil
	// checks only the key's shape everywhere.
	Auth *auth.Authenticator
}

// Host is the embed host, mounted at {public_url}/embed (and on embed_host by host routing).
type Host struct {
	js, css      asset
	formsBase    string
	embedURL     string
	cacheControl string
	auth         *auth.Authenticator
}

type asset struct {
	body  []byte
	etag  string
	ctype string
}

func newAsset(body []byte, ctype string) asset {
	sum := sha256.Sum256(body)
	return asset{body: body, etag: `"` + hex.EncodeToString(sum[:12]) + `"`, ctype: ctype}
}

// New returns the host with the embedded bundles. The script is served with a one-line prefix
// naming the forms base URL, so it works from any page and from a separate embed host name.
func New(o Options) *Host {
	pub := strings.TrimRight(o.PublicURL, "/")
	embed := strings.TrimRight(o.EmbedURL, "/")
	if embed == "" {
		embed = pub + "/embed"
	}
	base := pub + "/forms"
	prefix := "window.GatehouseFormsBase=window.GatehouseFormsBase||" + jsString(base) + ";\n"
	js := append([]byte(prefix), formsJS...)
	return &Host{
		js:           newAsset(js, "text/javascript; charset=utf-8"),
		css:          newAsset(formsCSS, "text/css; charset=utf-8"),
		formsBase:    base,
		embedURL:     embed,
		cacheControl: "public, max-age=300",
		auth:         o.Auth,
	}
}

// Segment is the path segment of the embed host's path-prefix form.
func (h *Host) Segment() string { return "embed" }

// Mount registers forms.js, forms.css and f/:slug.
func (h *Host) Mount(r fiber.Router) {
	r.Get("/forms.js", h.serve(h.js))
	r.Get("/forms.css", h.serve(h.css))
	r.Get("/f/:slug", h.page)
}

func (h *Host) serve(a asset) fiber.Handler {
	return func(c *fiber.Ctx) error {
		c.Set(fiber.HeaderETag, a.etag)
		c.Set(fiber.HeaderCacheControl, h.cacheControl)
		c.Set(fiber.HeaderAccessControlAllowOrigin, "*")
		c.Set(fiber.HeaderXContentTypeOptions, "nosniff")
		if c.Get(fiber.HeaderIfNoneMatch) == a.etag {
			return c.SendStatus(fiber.StatusNotModified)
		}
		c.Set(fiber.HeaderContentType, a.ctype)
		return c.Send(a.body)
	}
}

var (
	slugRe = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,62}$`)
	keyRe  = regexp.MustCompile(`^pk_(live|test)_[A-Za-z0-9_-]{4,248}$`)
)

// ErrBadEmbed is an iframe URL with a malformed slug or key (400 VALIDATION_FAILED; the
// answer's details name which of the two).
var ErrBadEmbed = apierr.New(400, apierr.CodeValidationFailed, "the embed URL needs a form slug and ?key=pk_live_...", nil)

// badEmbed returns ErrBadEmbed's code with details naming the bad parts of the URL.
func badEmbed(slugOK, keyOK bool) error {
	var p []apierr.FieldProblem
	if !slugOK {
		p = append(p, apierr.FieldProblem{Field: "slug", Problem: "must be a form slug"})
	}
	if !keyOK {
		p = append(p, apierr.FieldProblem{Field: "key", Problem: "must be a publishable key (pk_live_... or pk_test_...)"})
	}
	e := apierr.Validation(p...)
	e.Message = ErrBadEmbed.Message
	return e
}

var pageTmpl = template.Must(template.New("page").Parse(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Form</title>
<link rel="stylesheet" href="{{.Embed}}/forms.css">
<style>body{margin:0;padding:16px;background:transparent}</style>
</head>
<body>
<main>
<div data-gatehouse-form="{{.Slug}}" data-key="{{.Key}}" data-api="{{.API}}"></div>
</main>
<script src="{{.Embed}}/forms.js"></script>
</body>
</html>
`))

// keyRule is what the forms API demands of the key that loads a definition.
var keyRule = auth.Rule{Product: "forms", PublishableOnly: true, NeedProject: true}

// page answers the iframe page of one form. On the gateway's own hosts the key is checked by
// the API when the script loads the definition, and here only its shape is; on a tenant
// domain it is checked here too, and another project's key answers 403 FORBIDDEN (an unknown
// one 401), as on the API.
func (h *Host) page(c *fiber.Ctx) error {
	slug, key := c.Params("slug"), c.Query("key")
	if slugOK, keyOK := slugRe.MatchString(slug), keyRe.MatchString(key); !slugOK || !keyOK {
		return badEmbed(slugOK, keyOK)
	}
	if p := httpx.HostProject(c); p != "" && h.auth != nil {
		k, err := h.auth.Check(c.UserContext(), key, keyRule)
		if err != nil {
			return err
		}
		if k.Project != p {
			return auth.ErrForbidden
		}
	}
	var b strings.Builder
	if err := pageTmpl.Execute(&b, map[string]string{"Slug": slug, "Key": key, "API": h.formsBase, "Embed": h.embedURL}); err != nil {
		return err
	}
	c.Set(fiber.HeaderContentType, fiber.MIMETextHTMLCharsetUTF8)
	c.Set(fiber.HeaderCacheControl, "no-cache")
	c.Set(fiber.HeaderXContentTypeOptions, "nosniff")
	c.Set("Referrer-Policy", "strict-origin-when-cross-origin")
	return c.SendString(b.String())
}

// jsString quotes s as a JavaScript string literal safe inside a script.
func jsString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r == '<' || r == '>' || r == '&' || r == 0x2028 || r == 0x2029:
			b.WriteString(`\u`)
			const hexd = "0123456789abcdef"
			b.WriteByte(hexd[r>>12&0xf])
			b.WriteByte(hexd[r>>8&0xf])
			b.WriteByte(hexd[r>>4&0xf])
			b.WriteByte(hexd[r&0xf])
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
