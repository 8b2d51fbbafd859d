package admin

import (
	"context"
	"errors"
	"math"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/utils"

	"github.com/gatehouse-dev/gatehouse/edge"
	"github.com/gatehouse-dev/gatehouse/edge/accounts"
	"github.com/gatehouse-dev/gatehouse/edge/apierr"
	"github.com/gatehouse-dev/gatehouse/edge/auth"
	"github.com/gatehouse-dev/gatehouse/edge/httpx"
	"github.com/gatehouse-dev/gatehouse/edge/tenancy"
)

// Accounts serves the dashboard's sign-in (POST|GET|DELETE /session) and user management
// (/users) over edge/accounts, and resolves sessions for the edge's admin guard.
type Accounts struct {
	a *accounts.Service
	t *tenancy.Service
	// secure marks the session cookie Secure (public_url is https); path is its Path.
	secure bool
	path   string
}

var _ edge.AdminSessions = (*Accounts)(nil)

// AccountsOptions configures NewAccounts.
type AccountsOptions struct {
	// Accounts keeps the dashboard's users and sessions (required).
	Accounts *accounts.Service
	// Tenancy names the orgs users belong to (required).
	Tenancy *tenancy.Service
	// Secure sets the session cookie's Secure attribute (public_url is https: SecureCookie).
	Secure bool
	// Path is the session cookie's Path: the public_url's path plus "/" ("/" when empty).
	Path string
}

// NewAccounts returns the account routes over Options.Accounts.
func NewAccounts(o AccountsOptions) *Accounts {
	if o.Path == "" {
		o.Path = "/"
	}
	return &Accounts{a: o.Accounts, t: o.Tenancy, secure: o.Secure, path: o.Path}
}

// MountAdmin registers /session and /users.
func (h *Accounts) MountAdmin(r fiber.Router) {
	r.Post("/session", httpx.BodyLimit(8<<10), h.login)
	r.Get("/session", h.session)
	r.Delete("/session", h.logout)
	r.Get("/users", h.listUsers)
	r.Post("/users", httpx.BodyLimit(8<<10), h.createUser)
	r.Patch("/users/:email", httpx.BodyLimit(1<<10), h.setRole)
	r.Delete("/users/:email", h.deleteUser)
	h.mountSelf(r)
	h.mountInvites(r)
}

// Resolve implements edge.AdminSessions.
func (h *Accounts) Resolve(ctx context.Context, token string) (auth.Admin, string, error) {
	s, err := h.a.Session(ctx, token)
	if err != nil {
		return auth.Admin{}, "", err
	}
	u := s.User
	return auth.Admin{Email: u.Email, Operator: u.Operator, Org: u.Org, Role: u.Role}, s.CSRFToken, nil
}

// Enabled implements edge.AdminSessions.
func (h *Accounts) Enabled(ctx context.Context) bool {
	ok, err := h.a.Any(ctx)
	return ok && err == nil
}

// Errors of the account routes.
var (
	// ErrCredentials is a failed sign-in: the same answer for a wrong email and a wrong password.
	ErrCredentials = apierr.New(401, "", "wrong email or password", nil)
	// ErrUserExists refuses a second user with the same email.
	ErrUserExists = apierr.New(409, "USER_EXISTS", "a user with this email exists", nil)
	// ErrNotOwner refuses to manage users outside the caller's org, or without the owner role.
	ErrNotOwner = apierr.New(403, apierr.CodeForbidden, "only an operator or an owner of the org may manage its users", nil)
)

// sessionView is the answer of GET /session (and of a successful sign-in).
type sessionView struct {
	Email     string    `json:"email"`
	Operator  bool      `json:"operator"`
	Orgs      []orgRole `json:"orgs"`
	CSRFToken string    `json:"csrfToken"`
}

type orgRole struct {
	Slug string `json:"slug"`
	Role string `json:"role"`
}

// view builds the session answer: an operator gets every org as owner, a member its one org.
func (h *Accounts) view(ctx context.Context, a auth.Admin, csrf string) (sessionView, error) {
	v := sessionView{Email: a.Email, Operator: a.Operator, Orgs: []orgRole{}, CSRFToken: csrf}
	if !a.Operator {
		v.Orgs = append(v.Orgs, orgRole{Slug: a.Org, Role: a.Role})
		return v, nil
	}
	orgs, err := h.t.Orgs(ctx)
	if err != nil {
		return v, err
	}
	for _, o := range orgs {
		v.Orgs = append(v.Orgs, orgRole{Slug: o.Slug, Role: accounts.RoleOwner})
	}
	return v, nil
}

func (h *Accounts) login(c *fiber.Ctx) error {
	var req struct {
		Email    string `json:"email"`
		Password string `json:"password"`
	}
	if err := httpx.DecodeJSON(c, &req, apierr.CodeValidationFailed); err != nil {
		return err
	}
	if req.Email == "" || req.Password == "" {
		return apierr.Validation(apierr.FieldProblem{Field: "email,password", Problem: "both are required"})
	}
	s, err := h.a.Login(c.UserContext(), req.Email, req.Password, clientOf(c))
	var thr *accounts.ThrottledError
	switch {
	case errors.As(err, &thr):
		return throttled(thr)
	case errors.Is(err, accounts.ErrCredentials):
		return ErrCredentials
	case err != nil:
		return err
	}
	return h.signedIn(c, s)
}

// clientOf is where a request comes from, kept with a session it opens.
func clientOf(c *fiber.Ctx) accounts.Client {
	return accounts.Client{IP: utils.CopyString(c.IP()), UserAgent: string(c.Request().Header.UserAgent())}
}

// throttled is the 429 of too many failed sign-ins, with Retry-After in whole seconds.
func throttled(thr *accounts.ThrottledError) error {
	secs := int(math.Ceil(thr.RetryAfter.Seconds()))
	return apierr.New(429, apierr.CodeRateLimited, "too many failed sign-ins; retry later", thr).
		WithHeader(fiber.HeaderRetryAfter, strconv.Itoa(max(secs, 1)))
}

// signedIn sets the session cookie of a new session and answers the session view.
func (h *Accounts) signedIn(c *fiber.Ctx, s accounts.Session) error {
	c.Cookie(&fiber.Cookie{Name: auth.SessionCookie, Value: s.Token, Path: h.path, Expires: s.ExpiresAt,
		Secure: h.secure, HTTPOnly: true, SameSite: fiber.CookieSameSiteStrictMode})
	u := s.User
	v, err := h.view(c.UserContext(), auth.Admin{Email: u.Email, Operator: u.Operator, Org: u.Org, Role: u.Role}, s.CSRFToken)
	if err != nil {
		return err
	}
	return c.JSON(v)
}

func (h *Accounts) session(c *fiber.Ctx) error {
	a := auth.AdminOf(c)
	if a == nil {
		return edge.ErrAdminToken
	}
	csrf := ""
	if a.Email != "" {
		s, err := h.a.Session(c.UserContext(), c.Cookies(auth.SessionCookie))
		if err != nil {
			return edge.ErrAdminToken
		}
		csrf = s.CSRFToken
	}
	v, err := h.view(c.UserContext(), *a, csrf)
	if err != nil {
		return err
	}
	return c.JSON(v)
}

func (h *Accounts) logout(c *fiber.Ctx) error {
	if err := h.a.Logout(c.UserContext(), c.Cookies(auth.SessionCookie)); err != nil {
		return err
	}
	c.Cookie(&fiber.Cookie{Name: auth.SessionCookie, Value: "", Path: h.path, MaxAge: -1,
		Secure: h.secure, HTTPOnly: true, SameSite: fiber.CookieSameSiteStrictMode})
	return c.SendStatus(fiber.StatusNoContent)
}

// userRequest is the body of POST /users.
type userRequest struct {
	Email    string `json:"email"`
	Password string `json:"password"`
	Operator bool   `json:"operator"`
	Org      string `json:"org"`
	Role     string `json:"role"`
}

func (h *Accounts) createUser(c *fiber.Ctx) error {
	var req userRequest
	if err := httpx.DecodeJSON(c, &req, apierr.CodeValidationFailed); err != nil {
		return err
	}
	a := auth.AdminOf(c)
	switch {
	case req.Operator && !a.Operator:
		return auth.ErrOperatorOnly
	case !req.Operator && !a.IsOwner(req.Org):
		return ErrNotOwner
	}
	if !req.Operator && req.Org != "" {
		if _, err := h.t.Org(c.UserContext(), req.Org); err != nil {
			return toAPI(err)
		}
	}
	u, err := h.a.CreateUser(c.UserContext(), accounts.NewUser{Email: req.Email, Password: req.Password,
		Operator: req.Operator, Org: req.Org, Role: req.Role})
	var inv *accounts.InvalidError
	switch {
	case errors.As(err, &inv):
		return apierr.Validation(apierr.FieldProblem{Field: inv.Field, Problem: inv.Problem})
	case errors.Is(err, accounts.ErrExists):
		return ErrUserExists
	case err != nil:
		return err
	}
	return c.Status(fiber.StatusCreated).JSON(u)
}

// listUsers answers GET /users[?org=O]: an operator sees every user (or one org's), an owner
// the users of its org.
func (h *Accounts) listUsers(c *fiber.Ctx) error {
	a := auth.AdminOf(c)
	org := utils.CopyString(c.Query("org"))
	if !a.Operator {
		if org == "" {
			org = a.Org
		}
		if !a.IsOwner(org) {
			return ErrNotOwner
		}
	}
	users, err := h.a.Users(c.UserContext(), org)
	if err != nil {
		return err
	}
	return c.JSON(httpx.NewList(users, ""))
}

// manages answers nil when the caller may manage the user email names: an operator any user
// (404 when there is none); an owner only a user of its own org, any other email (another
// org's user, an operator, or nobody) being ErrNotOwner, so nothing shows of who exists.
func (h *Accounts) manages(c *fiber.Ctx, email string) error {
	a := auth.AdminOf(c)
	u, err := h.a.User(c.UserContext(), email)
	if !a.Operator && (err != nil || u.Operator || !a.IsOwner(u.Org)) {
		return ErrNotOwner
	}
	if errors.Is(err, accounts.ErrNotFound) {
		return apierr.New(404, apierr.CodeNotFound, "no such user", err)
	}
	return err
}

// deleteUser answers DELETE /users/{email}. An owner may remove only users of its own org: any
// other email (another org's user, an operator, or nobody) is 403, so nothing shows of who exists.
func (h *Accounts) deleteUser(c *fiber.Ctx) error {
	email := accounts.NormalizeEmail(utils.CopyString(c.Params("email")))
	if err := h.manages(c, email); err != nil {
		return err
	}
	if err := h.a.DeleteUser(c.UserContext(), email); err != nil && !errors.Is(err, accounts.ErrNotFound) {
		return err
	}
	return c.SendStatus(fiber.StatusNoContent)
}

// SecureCookie reports whether a public URL asks for Secure cookies (https).
func SecureCookie(publicURL string) bool {
	return strings.HasPrefix(strings.ToLower(publicURL), "https://")
}
