package edge

import (
	"context"
	"io"
	"log/slog"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/adaptor"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/valyala/fasthttp"

	"github.com/gatehouse-dev/gatehouse/edge/apierr"
	"github.com/gatehouse-dev/gatehouse/edge/config"
	"github.com/gatehouse-dev/gatehouse/edge/httpx"
	"github.com/gatehouse-dev/gatehouse/edge/openapi"
)

// Product is one public product (or host) mounted under {public_url}/<Segment>.
type Product interface {
	// Segment is the path segment of the product's base URL: email, files, forms, membership,
	// records, or cdn / embed for the asset and embed hosts.
	Segment() string
	// Mount registers the product's routes on r (already under the segment).
	Mount(r fiber.Router)
}

// AdminProduct is a product that also offers dashboard functions under /admin/v1.
type AdminProduct interface {
	MountAdmin(r fiber.Router)
}

// MaxBodyBytes is the largest body the server reads at all; routes set tighter limits with
// httpx.BodyLimit (forms: 1 MB JSON, 10 MB multipart; files: 5 MB per upload).
const MaxBodyBytes = 12 << 20

// Options configures New.
type Options struct {
	Config   config.Config
	Log      *slog.Logger
	Registry *prometheus.Registry
	// Products are mounted in order; AdminProducts among them also get admin routes.
	Products []Product
	// Admin mounts the foundation's own admin routes (apply, keys).
	Admin []AdminProduct
	// Sessions resolves dashboard sessions (gh_session cookie); nil: the admin token only.
	Sessions AdminSessions
	// ProjectOrg names a project's org, for the org scoping of admin routes (adminauth.go).
	ProjectOrg func(ctx context.Context, project string) (string, error)
	// Ready reports whether storage and indexes are ready; nil error means ready.
	Ready func() error
	// TenantHosts maps the tenants' own domains to their project (decisions.md 9.4); nil:
	// the gateway answers on its own hosts only.
	TenantHosts TenantHosts
	// PoisonRequestMemory (tests only) overwrites the request memory fiber lends to handlers
	// once each request is answered, so a handler that keeps any of it fails its tests
	// (poison.go). Never set in production.
	PoisonRequestMemory bool
}

// Server is the gateway's HTTP server.
type Server struct {
	app     *fiber.App
	log     *slog.Logger
	metrics *httpMetrics

	mu       sync.Mutex
	lns      []*connListener // added by Serve
	stopping atomic.Bool     // set by Shutdown (under mu)
}

// New builds the fiber app with the middleware order: request id, access log (which renders
// errors), recover, host routing, then the routes.
func New(o Options) (*Server, error) {
	log := o.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	reg := o.Registry
	if reg == nil {
		reg = prometheus.NewRegistry()
	}
	cfg := o.Config
	pub, err := url.Parse(cfg.PublicURL)
	if err != nil {
		return nil, err
	}
	base := strings.TrimRight(pub.Path, "/")
	app := fiber.New(fiber.Config{
		AppName:               "gatehouse",
		DisableStartupMessage: true,
		ErrorHandler:          httpx.ErrorHandler(log),
		BodyLimit:             MaxBodyBytes,
		// Bodies are streamed to handlers: uploads (files PUT) are copied to storage as they
		// arrive; c.Body() still reads a whole (limited) body for everyone else.
		StreamRequestBody: true,
		// Products read multipart bodies themselves (forms), after the key is checked; a
		// pre-parse by fasthttp would answer a malformed body 400 before authentication,
		// without CORS headers and with the parser's text as the message.
		DisablePreParseMultipartForm: true,
		ReadTimeout:                  cfg.ReadTimeout.D(),
		WriteTimeout:                 60 * time.Second,
		// A response's head and a body up to this size leave in one write: with fasthttp's
		// 4 KB a page of 25 records (about 8 KB) took two system calls. The buffer is taken
		// from a pool per response and returned when the connection has nothing more to read.
		WriteBufferSize:         16 << 10,
		IdleTimeout:             120 * time.Second,
		UnescapePath:            true,
		EnableTrustedProxyCheck: true,
		TrustedProxies:          cfg.TrustedProxies,
		ProxyHeader:             proxyHeader(cfg.TrustedProxies),
	})
	refuseOversize(app)
	refuseUnknownMethods(app)
	s := &Server{app: app, log: log, metrics: newHTTPMetrics(reg)}
	app.Server().Handler = s.closeWhileStopping(app.Server().Handler)
	app.Server().ConnState = connState
	if o.PoisonRequestMemory {
		app.Use(poisonRequestMemory)
	}
	app.Use(httpx.RequestID())
	app.Use(httpx.AccessLog(log, s.metrics.observe))
	app.Use(httpx.Recover(log))
	app.Use(bodyGuard)
	if cfg.TLS.HSTS {
		app.Use(hsts)
	}
	if mw := hostRouting(cfg, base, o.TenantHosts, apiSegments(o.Products)); mw != nil {
		app.Use(mw)
	}
	app.Get("/healthz", func(c *fiber.Ctx) error { return c.JSON(fiber.Map{"status": "ok"}) })
	app.Get("/readyz", func(c *fiber.Ctx) error {
		if o.Ready != nil {
			if err := o.Ready(); err != nil {
				return c.Status(fiber.StatusServiceUnavailable).JSON(fiber.Map{"status": "unavailable", "message": err.Error()})
			}
		}
		return c.JSON(fiber.Map{"status": "ready"})
	})
	app.Get("/metrics", adaptor.HTTPHandler(promhttp.HandlerFor(reg, promhttp.HandlerOpts{})))
	spec, err := openapi.New()
	if err != nil {
		return nil, err
	}
	spec.Mount(app.Group(base))
	ref, err := openapi.NewReference()
	if err != nil {
		return nil, err
	}
	ref.Mount(app.Group(base))

	admin := scopedRouter{Router: app.Group(base+"/admin/v1", adminAuth(cfg.AdminToken, o.Sessions, base+"/admin/v1/session", base+"/admin/v1/invites/accept")), projectOrg: o.ProjectOrg}
	for _, a := range o.Admin {
		a.MountAdmin(admin)
	}
	for _, p := range o.Products {
		p.Mount(app.Group(base + "/" + p.Segment()))
		if a, ok := p.(AdminProduct); ok {
			a.MountAdmin(admin)
		}
	}
	app.Use(func(c *fiber.Ctx) error { return apierr.ErrNotFound })
	return s, nil
}

// oversizeHeader marks (internally) a request whose declared body is over MaxBodyBytes.
const oversizeHeader = "X-Gatehouse-Oversize-Body"

// refuseOversize makes a declared Content-Length over MaxBodyBytes answer 413 before a byte of
// the body is read. With StreamRequestBody on, fasthttp reads the first 8 KB of the body
// before any handler runs, so a client that waits for an answer before sending a large body
// (as TestBodyTooLarge does) would hang: the header hook empties such a request (content
// length 0, connection closed after the answer) and marks it; bodyGuard answers 413.
// The mark is deleted from every incoming header first, so clients cannot set it.
func refuseOversize(app *fiber.App) {
	app.Server().HeaderReceived = func(h *fasthttp.RequestHeader) fasthttp.RequestConfig {
		h.Del(oversizeHeader)
		if h.ContentLength() > MaxBodyBytes {
			h.Set(oversizeHeader, "1")
			h.SetContentLength(0)
			h.Del(fasthttp.HeaderExpect) // no "100 Continue": the body is not wanted
			h.SetConnectionClose()
		}
		return fasthttp.RequestConfig{}
	}
}

// methodNotAllowed is the envelope of a request whose method no route knows.
const methodNotAllowed = `{"error":"METHOD_NOT_ALLOWED","message":"the method is not one the gateway serves"}`

// allowedMethods are the methods the gateway's routes use (the Allow header of a 405).
const allowedMethods = "GET, HEAD, POST, PUT, DELETE, OPTIONS"

// refuseUnknownMethods answers a method the router does not know (fiber would answer a plain
// text 400 "Invalid http method") with the envelope: 405 METHOD_NOT_ALLOWED with Allow.
func refuseUnknownMethods(app *fiber.App) {
	known := map[string]bool{}
	for _, m := range app.Config().RequestMethods {
		known[m] = true
	}
	srv := app.Server()
	next := srv.Handler
	srv.Handler = func(ctx *fasthttp.RequestCtx) {
		if known[string(ctx.Method())] {
			next(ctx)
			return
		}
		ctx.Response.Header.Set(fiber.HeaderAllow, allowedMethods)
		ctx.SetContentType(fiber.MIMEApplicationJSON)
		ctx.SetStatusCode(fiber.StatusMethodNotAllowed)
		ctx.SetBodyString(methodNotAllowed)
		ctx.SetConnectionClose() // its body, if any, is not read
	}
}

// bodyGuard answers 413 (no code) to requests refuseOversize marked, and keeps connections
// in sync with streamed bodies: a body the handler did not read to its end through c.Body()
// (refused early, or read only in part) would otherwise be parsed as the next request on the
// keep-alive connection. Up to 64 KB of a body of known length is drained; past that, or for
// a chunked body, the connection is closed after the answer. A body whose client stopped
// sending it before read_timeout is answered 408 REQUEST_TIMEOUT (bodytimeout.go).
func bodyGuard(c *fiber.Ctx) error {
	if len(c.Request().Header.Peek(oversizeHeader)) > 0 {
		c.Context().SetConnectionClose()
		return apierr.ErrTooLarge
	}
	// fiber's c.Body() would inflate a compressed body with no size limit (a zip bomb):
	// no route takes compressed bodies.
	if enc := c.Get(fiber.HeaderContentEncoding); enc != "" && !strings.EqualFold(enc, "identity") {
		c.Context().SetConnectionClose()
		return ErrContentEncoding
	}
	body := watchBody(c)
	err := bodyTimedOut(c, body, c.Next())
	if cl := c.Request().Header.ContentLength(); cl != 0 && (body == nil || !body.timedOut) {
		if rest := c.Context().RequestBodyStream(); rest != nil {
			if cl < 0 {
				c.Context().SetConnectionClose()
			} else if n, _ := io.CopyN(io.Discard, rest, drainMax+1); n > drainMax {
				c.Context().SetConnectionClose()
			}
		}
	}
	return err
}

// drainMax is how much of an unread request body bodyGuard reads to keep a connection.
const drainMax = 64 << 10

func proxyHeader(trusted []string) string {
	if len(trusted) == 0 {
		return ""
	}
	return fiber.HeaderXForwardedFor
}

// ErrContentEncoding refuses a compressed request body.
var ErrContentEncoding = apierr.New(415, "UNSUPPORTED_CONTENT_ENCODING", "request bodies must not be compressed", nil)

// ErrAdminToken is a missing or wrong admin token.
var ErrAdminToken = apierr.New(401, "", "a valid admin token is required", nil)

// hostRouting sends requests whose Host is the configured asset or embed host to the /cdn or
// /embed mount, so both the own-host and the path-prefix forms work; a request on a tenant
// domain goes to its project's part only (tenantRoute).
func hostRouting(cfg config.Config, base string, tenants TenantHosts, api map[string]bool) fiber.Handler {
	hosts := map[string]string{}
	pubHost := hostOf(cfg.PublicURL)
	if h := hostOf(cfg.AssetHost); h != "" && h != pubHost {
		hosts[h] = base + "/cdn"
	}
	if h := hostOf(cfg.EmbedHost); h != "" && h != pubHost {
		hosts[h] = base + "/embed"
	}
	if len(hosts) == 0 && tenants == nil {
		return nil
	}
	return func(c *fiber.Ctx) error {
		host := strings.ToLower(c.Hostname())
		if prefix, ok := hosts[host]; ok {
			if !strings.HasPrefix(c.Path(), prefix+"/") {
				c.Path(prefix + c.Path())
			}
			return c.Next()
		}
		if tenants == nil || host == pubHost {
			return c.Next()
		}
		return tenantRoute(c, tenants, stripPort(host), base, api)
	}
}
func hostOf(raw string) string {
	if raw == "" {
		return ""
	}
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return strings.ToLower(u.Host)
}

// App returns the fiber app (tests use it with app.Test or a listener).
func (s *Server) App() *fiber.App { return s.app }
