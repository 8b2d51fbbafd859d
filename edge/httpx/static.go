package httpx

import (
	"strings"

	"github.com/gofiber/fiber/v2"
)

// SendStatic answers an embedded file kept plain and (when gz is not nil) gzipped: the gzip
// form to a client that accepts it, with its own strong ETag (the plain one with "-gz"), 304
// to a matching If-None-Match, and Vary: Accept-Encoding. The caller sets its own caching and
// security headers first. The dashboard and the API reference page serve their bundles so.
func SendStatic(c *fiber.Ctx, body, gz []byte, etag, ctype string) error {
	c.Vary(fiber.HeaderAcceptEncoding)
	zipped := gz != nil && AcceptsGzip(c.Get(fiber.HeaderAcceptEncoding))
	if zipped {
		body, etag = gz, strings.TrimSuffix(etag, `"`)+`-gz"`
	}
	c.Set(fiber.HeaderETag, etag)
	if c.Get(fiber.HeaderIfNoneMatch) == etag {
		return c.SendStatus(fiber.StatusNotModified)
	}
	c.Set(fiber.HeaderContentType, ctype)
	if zipped {
		c.Set(fiber.HeaderContentEncoding, "gzip")
	}
	return c.Send(body)
}

// AcceptsGzip reports whether an Accept-Encoding header admits gzip (q=0 refuses it).
func AcceptsGzip(h string) bool {
	for _, part := range strings.Split(h, ",") {
		name, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if !strings.EqualFold(strings.TrimSpace(name), "gzip") {
			continue
		}
		q := strings.ReplaceAll(strings.TrimSpace(params), " ", "")
		return q != "q=0" && q != "q=0.0" && q != "q=0.00" && q != "q=0.000"
	}
	return false
}
