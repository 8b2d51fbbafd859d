package admin

import (
	"errors"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/utils"

	"github.com/gatehouse-dev/gatehouse/edge/accounts"
	"github.com/gatehouse-dev/gatehouse/edge/apierr"
	"github.com/gatehouse-dev/gatehouse/edge/auth"
	"github.com/gatehouse-dev/gatehouse/edge/httpx"
)

// Errors of the member and self-service routes.
var (
	// ErrNoAccount refuses the self-service routes to the admin token, which is no account.
	ErrNoAccount = apierr.New(403, apierr.CodeForbidden, "the admin token is not a dashboard account: sign in to manage your password and sessions", nil)
	// ErrOwnRole refuses to change one's own role (another owner or an operator does it), so an
	// org is never left without an owner by mistake.
	ErrOwnRole = apierr.New(403, apierr.CodeForbidden, "you cannot change your own role: ask another owner", nil)
	// ErrSessionNotFound names a session that is not one of the caller's.
	ErrSessionNotFound = apierr.New(404, apierr.CodeNotFound, "no such session of yours", nil)
	// ErrInviteNotFound is an unknown, expired, used or revoked invite.
	ErrInviteNotFound = apierr.New(404, apierr.CodeNotFound, "no such invite (it may have expired, been used or been revoked)", nil)
	// ErrWrongPassword is a wrong current password in a password change (not a 401: the
	// session stays valid).
	ErrWrongPassword = apierr.Validation(apierr.FieldProblem{Field: "currentPassword", Problem: "is not your password"})
)

// mountSelf registers what a signed-in user does to their own account: the list of their
// sessions, ending one or all others, and a password change.
func (h *Accounts) mountSelf(r fiber.Router) {
	r.Get("/session/sessions", h.listSessions)
	r.Delete("/session/sessions", h.endOtherSessions)
	r.Delete("/session/sessions/:id", h.endSession)
	r.Put("/session/password", httpx.BodyLimit(8<<10), h.changePassword)
}

// mountInvites registers an org's invites (owners) and their acceptance (no session: the
// invite's token is the credential).
func (h *Accounts) mountInvites(r fiber.Router) {
	r.Get("/orgs/:org/invites", h.listInvites)
	r.Post("/orgs/:org/invites", httpx.BodyLimit(8<<10), h.createInvite)
	r.Delete("/orgs/:org/invites/:email", h.revokeInvite)
	r.Post("/invites/accept", httpx.BodyLimit(8<<10), h.acceptInvite)
}

// account returns the signed-in user's email, or ErrNoAccount for the admin token.
func account(c *fiber.Ctx) (string, error) {
	a := auth.AdminOf(c)
	if a == nil || a.Email == "" {
		return "", ErrNoAccount
	}
	return a.Email, nil
}

// listSessions answers GET /session/sessions: the caller's open sessions, newest first.
func (h *Accounts) listSessions(c *fiber.Ctx) error {
	email, err := account(c)
	if err != nil {
		return err
	}
	list, err := h.a.Sessions(c.UserContext(), email, c.Cookies(auth.SessionCookie))
	if err != nil {
		return err
	}
	return c.JSON(httpx.NewList(list, ""))
}

// endSession answers DELETE /session/sessions/{id}: one of the caller's sessions ends (its
// own too, which is signing out).
func (h *Accounts) endSession(c *fiber.Ctx) error {
	email, err := account(c)
	if err != nil {
		return err
	}
	err = h.a.EndSession(c.UserContext(), email, utils.CopyString(c.Params("id")))
	if errors.Is(err, accounts.ErrNoSession) {
		return ErrSessionNotFound
	}
	if err != nil {
		return err
	}
	return c.SendStatus(fiber.StatusNoContent)
}

// endOtherSessions answers DELETE /session/sessions: every session of the caller but this
// one ends; {"ended": n}.
func (h *Accounts) endOtherSessions(c *fiber.Ctx) error {
	email, err := account(c)
	if err != nil {
		return err
	}
	n, err := h.a.EndOtherSessions(c.UserContext(), email, c.Cookies(auth.SessionCookie))
	if err != nil {
		return err
	}
	return c.JSON(fiber.Map{"ended": n})
}

// changePassword answers PUT /session/password {"currentPassword","newPassword"}: 204, and
// the caller's other sessions end.
func (h *Accounts) changePassword(c *fiber.Ctx) error {
	email, err := account(c)
	if err != nil {
		return err
	}
	var req struct {
		Current string `json:"currentPassword"`
		New     string `json:"newPassword"`
	}
	if err := httpx.DecodeJSON(c, &req, apierr.CodeValidationFailed); err != nil {
		return err
	}
	err = h.a.ChangePassword(c.UserContext(), email, req.Current, req.New, c.Cookies(auth.SessionCookie))
	var thr *accounts.ThrottledError
	var inv *accounts.InvalidError
	switch {
	case errors.As(err, &thr):
		return throttled(thr)
	case errors.Is(err, accounts.ErrCredentials):
		return ErrWrongPassword
	case errors.As(err, &inv):
		return apierr.Validation(apierr.FieldProblem{Field: "newPassword", Problem: inv.Problem})
	case err != nil:
		return err
	}
	return c.SendStatus(fiber.StatusNoContent)
}

// setRole answers PATCH /users/{email} {"role": "owner"|"member"}: an owner of the user's org
// (or an operator) changes it; anyone else, and any other email, is 403 as for DELETE.
func (h *Accounts) setRole(c *fiber.Ctx) error {
	a := auth.AdminOf(c)
	email := accounts.NormalizeEmail(utils.CopyString(c.Params("email")))
	var req struct {
		Role string `json:"role"`
	}
	if err := httpx.DecodeJSON(c, &req, apierr.CodeValidationFailed); err != nil {
		return err
	}
	if err := h.manages(c, email); err != nil {
		return err
	}
	if email == a.Email {
		return ErrOwnRole
	}
	u, err := h.a.SetRole(c.UserContext(), email, req.Role)
	var inv *accounts.InvalidError
	if errors.As(err, &inv) {
		return apierr.Validation(apierr.FieldProblem{Field: inv.Field, Problem: inv.Problem})
	}
	if err != nil {
		return err
	}
	return c.JSON(u)
}

// ownerOf answers ErrNotOwner unless the caller manages the route's org (the guard already
// answered 404 for another org's member).
func ownerOf(c *fiber.Ctx) (string, error) {
	org := utils.CopyString(c.Params("org"))
	if !auth.AdminOf(c).IsOwner(org) {
		return "", ErrNotOwner
	}
	return org, nil
}

// listInvites answers GET /orgs/{org}/invites: pending invites, never their tokens.
func (h *Accounts) listInvites(c *fiber.Ctx) error {
	org, err := ownerOf(c)
	if err != nil {
		return err
	}
	list, err := h.a.Invites(c.UserContext(), org)
	if err != nil {
		return err
	}
	return c.JSON(httpx.NewList(list, ""))
}

// inviteView is the answer of POST /orgs/{org}/invites: the invite and its token, shown once.
type inviteView struct {
	accounts.Invite
	Token string `json:"token"`
}

// createInvite answers POST /orgs/{org}/invites {"email","role"}: 201 with the token, which the
// dashboard turns into a link for the invitee.
func (h *Accounts) createInvite(c *fiber.Ctx) error {
	org, err := ownerOf(c)
	if err != nil {
		return err
	}
	if _, err := h.t.Org(c.UserContext(), org); err != nil {
		return toAPI(err)
	}
	var req struct {
		Email string `json:"email"`
		Role  string `json:"role"`
	}
	if err := httpx.DecodeJSON(c, &req, apierr.CodeValidationFailed); err != nil {
		return err
	}
	inv, token, err := h.a.CreateInvite(c.UserContext(), req.Email, org, req.Role, auth.AdminOf(c).Email)
	var bad *accounts.InvalidError
	switch {
	case errors.As(err, &bad):
		return apierr.Validation(apierr.FieldProblem{Field: bad.Field, Problem: bad.Problem})
	case errors.Is(err, accounts.ErrExists):
		return ErrUserExists
	case err != nil:
		return err
	}
	return c.Status(fiber.StatusCreated).JSON(inviteView{Invite: inv, Token: token})
}

// revokeInvite answers DELETE /orgs/{org}/invites/{email}.
func (h *Accounts) revokeInvite(c *fiber.Ctx) error {
	org, err := ownerOf(c)
	if err != nil {
		return err
	}
	err = h.a.RevokeInvite(c.UserContext(), org, utils.CopyString(c.Params("email")))
	if errors.Is(err, accounts.ErrNoInvite) {
		return ErrInviteNotFound
	}
	if err != nil {
		return err
	}
	return c.SendStatus(fiber.StatusNoContent)
}

// acceptInvite answers POST /invites/accept {"token","password"}: the invited user is created
// and signed in (the session cookie and view, as POST /session answers).
func (h *Accounts) acceptInvite(c *fiber.Ctx) error {
	var req struct {
		Token    string `json:"token"`
		Password string `json:"password"`
	}
	if err := httpx.DecodeJSON(c, &req, apierr.CodeValidationFailed); err != nil {
		return err
	}
	s, err := h.a.AcceptInvite(c.UserContext(), req.Token, req.Password, clientOf(c))
	var thr *accounts.ThrottledError
	var bad *accounts.InvalidError
	switch {
	case errors.As(err, &thr):
		return throttled(thr)
	case errors.Is(err, accounts.ErrNoInvite):
		return ErrInviteNotFound
	case errors.Is(err, accounts.ErrExists):
		return ErrUserExists
	case errors.As(err, &bad):
		return apierr.Validation(apierr.FieldProblem{Field: bad.Field, Problem: bad.Problem})
	case err != nil:
		return err
	}
	return h.signedIn(c, s)
}
