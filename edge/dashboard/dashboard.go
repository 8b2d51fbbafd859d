// Package dashboard serves the dashboard, the browser app over the admin API, at
// {public_url}/dashboard/ (decisions.md 8.2). The app is built by sdk-js/packages/dashboard
// (esbuild) into assets/ and committed; it is embedded here with go:embed, so the Go build never
// needs npm and the dashboard works offline (no CDN). Every path under /dashboard/ that is not
// a built file answers index.html, so the app's own routes (/dashboard/keys, ...) load on a
// reload. The app holds no rules: every one is the admin API's.
package dashboard

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"html/template"
	"io/fs"
	"mime"
	"net/url"
	"path"
	"strings"

	"github.com/gatehouse-dev/gatehouse/edge/httpx"
	"github.com/gofiber/fiber/v2"
)

//go:embed assets
var assetsFS embed.FS

// Options configures New.
type Options struct {
	// PublicURL is the gateway's public URL; the app lives at {PublicURL}/dashboard/ and calls
	// {PublicURL}/admin/v1.
	PublicURL string
	// AssetURL is {asset_host} (thumbnails of assets); images from it are allowed by the CSP.
	AssetURL string
}

// Host serves the dashboard's files.
type Host struct {
	files map[string]file
	index file
	csp   string
	base  string // path of the dashboard, "/…/dashboard"
}

// file is one embedded file, with its gzip form when that is smaller.
type file struct {
	body, gz []byte
	etag     string
	ctype    string
}

func newFile(body []byte, ctype string) file {
	sum := sha256.Sum256(body)
	f := file{body: body, etag: `"` + hex.EncodeToString(sum[:12]) + `"`, ctype: ctype}
	var b bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&b, gzip.BestCompression)
	_, _ = zw.Write(body)
	_ = zw.Close()
	if b.Len() < len(body) {
		f.gz = b.Bytes()
	}
	return f
}

// New reads the embedded build. It fails only when the committed build is broken.
func New(o Options) (*Host, error) {
	pub := strings.TrimRight(o.PublicURL, "/")
	base := pathOf(pub) + "/dashboard"
	h := &Host{files: map[string]file{}, base: base}
	sub, err := fs.Sub(assetsFS, "assets")
	if err != nil {
		return nil, err
	}
	err = fs.WalkDir(sub, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || p == "index.html" {
			return err
		}
		b, err := fs.ReadFile(sub, p)
		if err != nil {
			return err
		}
		ct := mime.TypeByExtension(path.Ext(p))
		if ct == "" {
			ct = "application/octet-stream"
		}
		h.files[p] = newFile(b, ct)
		return nil
	})
	if err != nil {
		return nil, err
	}
	raw, err := fs.ReadFile(sub, "index.html")
	if err != nil {
		return nil, err
	}
	tmpl, err := template.New("index").Parse(string(raw))
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if err := tmpl.Execute(&b, map[string]string{"Base": base, "API": pathOf(pub) + "/admin/v1", "AssetURL": strings.TrimRight(o.AssetURL, "/")}); err != nil {
		return nil, err
	}
	h.index = newFile(b.Bytes(), fiber.MIMETextHTMLCharsetUTF8)
	img := "'self' data: blob:"
	if a := originOf(o.AssetURL); a != "" && a != originOf(pub) {
		img += " " + a
	}
	h.csp = "default-src 'self'; img-src " + img + "; style-src 'self'; script-src 'self'; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"
	return h, nil
}

// pathOf returns the path of a URL without its trailing slash ("" for the root).
func pathOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return strings.TrimRight(u.Path, "/")
}

// originOf returns scheme://host of an absolute URL ("" when it has none).
func originOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return ""
	}
	return u.Scheme + "://" + u.Host
}

// Segment is the dashboard's path segment.
func (h *Host) Segment() string { return "dashboard" }

// Mount registers the files and the fallback to index.html.
func (h *Host) Mount(r fiber.Router) {
	r.Get("/*", h.serve)
}

func (h *Host) serve(c *fiber.Ctx) error {
	p := c.Params("*")
	if p == "" && !strings.HasSuffix(c.Path(), "/") {
		return c.Redirect(h.base+"/", fiber.StatusMovedPermanently)
	}
	f, ok := h.files[p]
	if !ok {
		f = h.index // the app's own routes
		c.Set(fiber.HeaderCacheControl, "no-cache")
		c.Set(fiber.HeaderContentSecurityPolicy, h.csp)
		c.Set(fiber.HeaderXFrameOptions, "DENY")
		c.Set("Referrer-Policy", "same-origin")
	} else {
		// Built files keep their names across builds: revalidate with the ETag.
		c.Set(fiber.HeaderCacheControl, "no-cache")
	}
	c.Set(fiber.HeaderXContentTypeOptions, "nosniff")
	return httpx.SendStatic(c, f.body, f.gz, f.etag, f.ctype)
}
