package auth

import (
	"github.com/gatehouse-dev/gatehouse/edge/apierr"
	"github.com/gofiber/fiber/v2"
)

// SessionCookie is the cookie that carries a dashboard session (decisions.md 8.2).
const SessionCookie = "gh_session"

// Admin is who calls the admin API: the operator (the admin token or an operator account),
// or a dashboard user who is a member of one org with the role owner or member.
type Admin struct {
	// Email is the account's email; empty for the admin token.
	Email    string
	Operator bool
	// Org and Role are a member's org and role (owner or member); empty for operators.
	Org  string
	Role string
}

// SeesOrg reports whether the caller may see and change org's data. A nil Admin sees nothing.
func (a *Admin) SeesOrg(org string) bool {
	return a != nil && (a.Operator || (org != "" && a.Org == org))
}

// IsOwner reports whether the caller manages org's users: an operator or an owner of org.
func (a *Admin) IsOwner(org string) bool {
	return a != nil && (a.Operator || (a.SeesOrg(org) && a.Role == "owner")) // accounts.RoleOwner
}

type adminLocal struct{}

// SetAdmin records the admin API caller of a request (the edge's admin middleware does).
func SetAdmin(c *fiber.Ctx, a *Admin) { c.Locals(adminLocal{}, a) }

// AdminOf returns the admin API caller of the request (nil outside the admin API).
func AdminOf(c *fiber.Ctx) *Admin {
	a, _ := c.Locals(adminLocal{}).(*Admin)
	return a
}

// Admin API refusals shared by every admin route.
var (
	// ErrOperatorOnly refuses a member's session on an operator-only route.
	ErrOperatorOnly = apierr.New(403, apierr.CodeForbidden, "only an operator may do this", nil)
	// ErrAdminNotFound answers a member who names anything of another org: the same answer as
	// for something that does not exist, so nothing of the other org shows.
	ErrAdminNotFound = apierr.New(404, apierr.CodeNotFound, "no such entity", nil)
)

// OperatorOnly is route middleware that refuses every caller but an operator with 403 FORBIDDEN.
func OperatorOnly(c *fiber.Ctx) error {
	if a := AdminOf(c); a == nil || !a.Operator {
		return ErrOperatorOnly
	}
	return c.Next()
}

// RequireOrg answers ErrAdminNotFound unless the admin caller sees org; handlers of routes
// whose org is not in the path (an id that belongs to an org) call it after loading.
func RequireOrg(c *fiber.Ctx, org string) error {
	if !AdminOf(c).SeesOrg(org) {
		return ErrAdminNotFound
	}
	return nil
}

// OrgOrNone returns a member's org, or a value no org has when the caller is nil, so that a
// filter by it matches nothing.
func (a *Admin) OrgOrNone() string {
	if a == nil || a.Org == "" {
		return "\x00none"
	}
	return a.Org
}
