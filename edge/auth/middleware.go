package auth

import (
	"context"
	"errors"
	"strings"

	"github.com/gatehouse-dev/gatehouse/edge/apierr"
	"github.com/gatehouse-dev/gatehouse/edge/apikey"
	"github.com/gatehouse-dev/gatehouse/edge/httpx"
	"github.com/gofiber/fiber/v2"
	lru "github.com/hashicorp/golang-lru/v2"
)

// Rule is what one route demands of the key.
type Rule struct {
	// Product the key must be scoped for ("email", "files", "forms", "membership", "records").
	Product string
	// SecretOnly refuses publishable keys with 403 SECRET_KEY_REQUIRED.
	SecretOnly bool
	// PublishableOnly refuses secret keys with 403 FORBIDDEN (browser-only routes).
	PublishableOnly bool
	// AllowTest accepts pk_test_ keys (the membership embed); elsewhere they get 403.
	AllowTest bool
	// NeedProject refuses org-only keys with 400 API_KEY_REQUIRES_PROJECT_SCOPE.
	NeedProject bool
	// Bearer also accepts "Authorization: Bearer <key>".
	Bearer bool
}

// Errors the middleware answers with.
var (
	ErrSecretRequired = apierr.New(403, "SECRET_KEY_REQUIRED", "this route needs a secret key, used server-side", nil)
	ErrForbidden      = apierr.New(403, apierr.CodeForbidden, "the key is not scoped for this product or project", nil)
	ErrNeedsProject   = apierr.New(400, "API_KEY_REQUIRES_PROJECT_SCOPE", "the key must be scoped to a project", nil)
)

type cached struct {
	key   apikey.Key
	found bool
}

// Authenticator checks keys against a Lookup through an LRU cache.
type Authenticator struct {
	lookup Lookup
	cache  *lru.Cache[string, cached]
}

// Options configures New.
type Options struct {
	// Lookup finds keys by hash (tenancy; required).
	Lookup Lookup
	// Size is how many lookups (hits and misses) the cache keeps (10,000 when 0).
	Size int
}

// New returns an Authenticator over Options.Lookup. It starts nothing.
func New(o Options) *Authenticator {
	if o.Size <= 0 {
		o.Size = 10000
	}
	c, _ := lru.New[string, cached](o.Size)
	return &Authenticator{lookup: o.Lookup, cache: c}
}

// Purge forgets every cached lookup. Tenancy calls it after each change to keys, so a revoked
// key stops working at once.
func (a *Authenticator) Purge() { a.cache.Purge() }

type keyLocal struct{}

// KeyOf returns the authenticated key of the request (nil on routes without a Rule).
func KeyOf(c *fiber.Ctx) *apikey.Key {
	k, _ := c.Locals(keyLocal{}).(*apikey.Key)
	return k
}

// Require returns middleware that enforces rule and stores the key for KeyOf.
func (a *Authenticator) Require(rule Rule) fiber.Handler {
	return func(c *fiber.Ctx) error {
		value := c.Get("X-API-Key")
		if value == "" && rule.Bearer {
			if h := c.Get(fiber.HeaderAuthorization); len(h) > 7 && strings.EqualFold(h[:7], "bearer ") {
				value = strings.TrimSpace(h[7:])
			}
		}
		key, err := a.Check(c.UserContext(), value, rule)
		if err != nil {
			if !rule.SecretOnly {
				// Browsers may read why a publishable-key route refused them (401, 403, 400):
				// the answer holds no data, only the code.
				allowBrowsers(c)
			}
			if rule.Bearer && errors.Is(err, apierr.ErrUnauthorized) {
				c.Set(fiber.HeaderWWWAuthenticate, `ApiKey header="X-API-Key", Bearer`)
			}
			return err
		}
		if !rule.SecretOnly && key.Kind == apikey.Publishable {
			allowBrowsers(c)
		}
		// On a tenant domain (decisions.md 9.4) only that project's keys are accepted.
		if p := httpx.HostProject(c); p != "" && key.Project != p {
			return ErrForbidden
		}
		c.Locals(keyLocal{}, key)
		return c.Next()
	}
}

// ExposedHeaders are the response headers a page may read on publishable-key routes, beyond
// the CORS-safelisted ones: Retry-After of a 429, the ETag of GET /config, the request id.
const ExposedHeaders = "Retry-After, ETag, X-Request-Id"

// allowBrowsers opens a publishable-key answer to pages of any origin.
func allowBrowsers(c *fiber.Ctx) {
	c.Set(fiber.HeaderAccessControlAllowOrigin, "*")
	c.Set(fiber.HeaderAccessControlExposeHeaders, ExposedHeaders)
}

// Check authenticates a key value against rule without HTTP, returning the key or the API error.
func (a *Authenticator) Check(ctx context.Context, value string, rule Rule) (*apikey.Key, error) {
	if value == "" {
		return nil, apierr.ErrUnauthorized
	}
	if _, _, err := apikey.KindOf(value); err != nil {
		return nil, apierr.ErrUnauthorized
	}
	hash := apikey.Hash(value)
	ent, ok := a.cache.Get(hash)
	if !ok {
		k, err := a.lookup.KeyByHash(ctx, hash)
		switch {
		case errors.Is(err, apikey.ErrUnknownKey):
			ent = cached{}
		case err != nil:
			return nil, err
		default:
			ent = cached{key: k, found: sameHash(k.Hash, hash)}
		}
		a.cache.Add(hash, ent)
	}
	if !ent.found || ent.key.Revoked {
		return nil, apierr.ErrUnauthorized
	}
	key := ent.key
	switch {
	case rule.SecretOnly && key.Kind != apikey.Secret:
		return nil, ErrSecretRequired
	case rule.PublishableOnly && key.Kind != apikey.Publishable:
		return nil, ErrForbidden
	case key.Test && !rule.AllowTest:
		return nil, ErrForbidden
	case rule.Product != "" && !key.HasProduct(rule.Product):
		return nil, ErrForbidden
	case rule.NeedProject && key.Project == "":
		return nil, ErrNeedsProject
	}
	return &key, nil
}

// Handle registers a product route guarded by rule. Routes that accept publishable keys are
// open to browsers: they answer CORS preflights for any origin, and their refusals (401, 403,
// 400) carry Access-Control-Allow-Origin so a page can read the code. Secret-only routes send
// no Access-Control-Allow-Origin: their preflight answers 204 without it (the route exists;
// browsers are not let in), never 404.
func (a *Authenticator) Handle(r fiber.Router, method, path string, rule Rule, handlers ...fiber.Handler) {
	r.Add(method, path, append([]fiber.Handler{a.Require(rule)}, handlers...)...)
	if rule.SecretOnly {
		allow := method + ", OPTIONS"
		r.Options(path, func(c *fiber.Ctx) error {
			c.Set(fiber.HeaderAllow, allow)
			return c.SendStatus(fiber.StatusNoContent)
		})
	} else {
		r.Options(path, func(c *fiber.Ctx) error {
			c.Set(fiber.HeaderAccessControlAllowOrigin, "*")
			c.Set(fiber.HeaderAccessControlAllowMethods, "GET, POST, PUT, OPTIONS")
			c.Set(fiber.HeaderAccessControlAllowHeaders, "X-API-Key, Content-Type, Authorization, Idempotency-Key")
			c.Set(fiber.HeaderAccessControlMaxAge, "600")
			return c.SendStatus(fiber.StatusNoContent)
		})
	}
}
