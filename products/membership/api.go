package membership

import (
	"net/http"

	"github.com/gofiber/fiber/v2"

	"github.com/gatehouse-dev/gatehouse/edge"
	"github.com/gatehouse-dev/gatehouse/edge/auth"
)

// CacheControl is sent with every 200 and 304 answer of GET /config: browsers may reuse the
// answer for a minute and then revalidate it with If-None-Match.
const CacheControl = "private, max-age=60"

// API is the membership product, mounted at {public_url}/membership.
type API struct {
	auth *auth.Authenticator
	svc  *Service
}

var (
	_ edge.Product      = (*API)(nil)
	_ edge.AdminProduct = (*API)(nil)
)

// NewAPI returns the membership routes over svc, guarding them with a.
func NewAPI(svc *Service, a *auth.Authenticator) *API {
	return &API{auth: a, svc: svc}
}

// Segment implements edge.Product.
func (p *API) Segment() string { return "membership" }

// Rule is what GET /config demands of the key: a publishable key (live or test) scoped for
// membership and for one project, whose active connection is the answer.
var Rule = auth.Rule{Product: "membership", PublishableOnly: true, AllowTest: true, NeedProject: true}

// Mount implements edge.Product.
func (p *API) Mount(r fiber.Router) {
	p.auth.Handle(r, http.MethodGet, "/config", Rule, p.getConfig)
	// HEAD answers the same headers without the body (curl -I, cache probes).
	p.auth.Handle(r, http.MethodHead, "/config", Rule, p.getConfig)
}

func (p *API) getConfig(c *fiber.Ctx) error {
	key := auth.KeyOf(c)
	// One URL answers differently per key: shared and browser caches must key on it.
	c.Set(fiber.HeaderVary, "X-API-Key")
	ans, err := p.svc.Config(c.UserContext(), key.Project)
	if err != nil {
		c.Set(fiber.HeaderCacheControl, "no-store")
		return apiError(err)
	}
	c.Set(fiber.HeaderCacheControl, CacheControl)
	c.Set(fiber.HeaderETag, ans.ETag)
	if noneMatch(c.Get(fiber.HeaderIfNoneMatch), ans.ETag) {
		return c.SendStatus(fiber.StatusNotModified)
	}
	c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSON)
	return c.Send(ans.Body)
}
