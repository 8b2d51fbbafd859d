package edge

import (
	"context"
	"crypto/subtle"
	"slices"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/gatehouse-dev/gatehouse/edge/apierr"
	"github.com/gatehouse-dev/gatehouse/edge/auth"
)

// AdminSessions resolves dashboard sessions for the admin API (edge/accounts through an
// adapter in the composition root).
type AdminSessions interface {
	// Resolve returns who holds the session token and the session's CSRF token, or an error
	// when the session is unknown, expired or ended.
	Resolve(ctx context.Context, token string) (admin auth.Admin, csrf string, err error)
	// Enabled reports whether any dashboard account exists: with no admin token configured,
	// the admin API is on only then.
	Enabled(ctx context.Context) bool
}

// ErrCSRFRequired refuses a state-changing request made with a session cookie but without the
// session's X-CSRF-Token header.
var ErrCSRFRequired = apierr.New(403, "CSRF_REQUIRED", "a state-changing request with a session needs the X-CSRF-Token header of GET /admin/v1/session", nil)

// CSRFHeader is the header carrying a session's CSRF token.
const CSRFHeader = "X-CSRF-Token"

// adminAuth guards /admin/v1: "Authorization: Bearer <admin token>" is the operator; otherwise
// the gh_session cookie names a dashboard session, and state-changing methods then need
// X-CSRF-Token. A POST to one of publicPaths (signing in, accepting an invite) passes without
// either. With no admin token and no dashboard account the admin API does not exist (404).
func adminAuth(token string, sessions AdminSessions, publicPaths ...string) fiber.Handler {
	return func(c *fiber.Ctx) error {
		ctx := c.UserContext()
		if token == "" && (sessions == nil || !sessions.Enabled(ctx)) {
			return apierr.ErrNotFound
		}
		if h := c.Get(fiber.HeaderAuthorization); h != "" {
			got, ok := strings.CutPrefix(h, "Bearer ")
			if token == "" || !ok || subtle.ConstantTimeCompare([]byte(got), []byte(token)) != 1 {
				c.Set(fiber.HeaderWWWAuthenticate, `Bearer realm="gatehouse-admin"`)
				return ErrAdminToken
			}
			auth.SetAdmin(c, &auth.Admin{Operator: true})
			return c.Next()
		}
		if c.Method() == fiber.MethodPost && slices.Contains(publicPaths, c.Path()) {
			return c.Next()
		}
		cookie := c.Cookies(auth.SessionCookie)
		if cookie == "" || sessions == nil {
			c.Set(fiber.HeaderWWWAuthenticate, `Bearer realm="gatehouse-admin"`)
			return ErrAdminToken
		}
		adm, csrf, err := sessions.Resolve(ctx, cookie)
		if err != nil {
			return ErrAdminToken
		}
		switch c.Method() {
		case fiber.MethodGet, fiber.MethodHead, fiber.MethodOptions:
		default:
			if got := c.Get(CSRFHeader); got == "" || subtle.ConstantTimeCompare([]byte(got), []byte(csrf)) != 1 {
				return ErrCSRFRequired
			}
		}
		auth.SetAdmin(c, &adm)
		return c.Next()
	}
}

// scopedRouter registers admin routes behind the org guard: a member's session reaches a route
// with an :org or :project parameter only for its own org, and is answered 404 (as for
// something that does not exist) otherwise. Routes with neither parameter check the org of
// what they load themselves (auth.RequireOrg) or are operator-only (auth.OperatorOnly);
// TestAdminRoutesScopeEveryRoute in edge/cmd/gatehouse holds every route to that.
type scopedRouter struct {
	fiber.Router
	prefix     string
	projectOrg func(ctx context.Context, project string) (string, error)
}

func (r scopedRouter) guard(path string) fiber.Handler {
	var hasOrg, hasProject bool
	for _, seg := range strings.Split(r.prefix+path, "/") {
		seg = strings.TrimSuffix(seg, "?")
		hasOrg = hasOrg || seg == ":org"
		hasProject = hasProject || seg == ":project"
	}
	return func(c *fiber.Ctx) error {
		a := auth.AdminOf(c)
		if a != nil && a.Operator {
			return c.Next()
		}
		if hasOrg && !a.SeesOrg(c.Params("org")) {
			return auth.ErrAdminNotFound
		}
		if hasProject {
			if r.projectOrg == nil {
				return auth.ErrAdminNotFound
			}
			org, err := r.projectOrg(c.UserContext(), c.Params("project"))
			if err != nil || !a.SeesOrg(org) {
				return auth.ErrAdminNotFound
			}
		}
		return c.Next()
	}
}

// Add registers a route behind the guard.
func (r scopedRouter) Add(method, path string, handlers ...fiber.Handler) fiber.Router {
	r.Router.Add(method, path, append([]fiber.Handler{r.guard(path)}, handlers...)...)
	return r
}

// Get registers a GET route behind the guard (fiber also answers HEAD with it).
func (r scopedRouter) Get(path string, h ...fiber.Handler) fiber.Router {
	return r.Add(fiber.MethodGet, path, h...)
}

// Head registers a HEAD route behind the guard.
func (r scopedRouter) Head(path string, h ...fiber.Handler) fiber.Router {
	return r.Add(fiber.MethodHead, path, h...)
}

// Post registers a POST route behind the guard.
func (r scopedRouter) Post(path string, h ...fiber.Handler) fiber.Router {
	return r.Add(fiber.MethodPost, path, h...)
}

// Put registers a PUT route behind the guard.
func (r scopedRouter) Put(path string, h ...fiber.Handler) fiber.Router {
	return r.Add(fiber.MethodPut, path, h...)
}

// Patch registers a PATCH route behind the guard.
func (r scopedRouter) Patch(path string, h ...fiber.Handler) fiber.Router {
	return r.Add(fiber.MethodPatch, path, h...)
}

// Delete registers a DELETE route behind the guard.
func (r scopedRouter) Delete(path string, h ...fiber.Handler) fiber.Router {
	return r.Add(fiber.MethodDelete, path, h...)
}

// Options registers an OPTIONS route behind the guard.
func (r scopedRouter) Options(path string, h ...fiber.Handler) fiber.Router {
	return r.Add(fiber.MethodOptions, path, h...)
}

// All registers a route for every method behind the guard.
func (r scopedRouter) All(path string, h ...fiber.Handler) fiber.Router {
	for _, m := range []string{fiber.MethodGet, fiber.MethodPost, fiber.MethodPut, fiber.MethodPatch, fiber.MethodDelete} {
		r.Add(m, path, h...)
	}
	return r
}

// Group returns a sub-router whose routes are guarded too.
func (r scopedRouter) Group(prefix string, handlers ...fiber.Handler) fiber.Router {
	return scopedRouter{Router: r.Router.Group(prefix, handlers...), prefix: r.prefix + prefix, projectOrg: r.projectOrg}
}

// Route calls fn with a guarded sub-router.
func (r scopedRouter) Route(prefix string, fn func(fiber.Router), _ ...string) fiber.Router {
	fn(r.Group(prefix))
	return r
}
