package accounts

import (
	"context"
	"encoding/json"
	"errors"
	"sort"
	"time"

	"github.com/gatehouse-dev/gatehouse/edge/store"
)

// ErrNoInvite is an unknown, expired, used or revoked invite.
var ErrNoInvite = errors.New("accounts: no such invite")

// InviteTTL is how long an invite can be accepted.
const InviteTTL = 7 * 24 * time.Hour

// Invite is an owner's invitation of an email into an org with a role, as the admin API lists
// it: never its token. The invitee accepts it by choosing a password (AcceptInvite), which
// creates the user.
type Invite struct {
	Email     string    `json:"email"`
	Org       string    `json:"org"`
	Role      string    `json:"role"`
	InvitedBy string    `json:"invitedBy,omitempty"`
	CreatedAt time.Time `json:"createdAt"`
	ExpiresAt time.Time `json:"expiresAt"`
}

// Invites live under accounts/invite/<sha256 of token> (the token is never stored), like sessions.
func inviteKey(token string) []byte { return store.Key(root, "invite", sessionID(token)) }

var invitePrefix = store.Prefix(root, "invite")

// CreateInvite invites email into org with role (member when empty) and returns the invite and
// its token, shown once (the dashboard makes a link of it). A pending invite of the same email
// is replaced; an email that already has an account is ErrExists. by names the inviter.
func (s *Service) CreateInvite(ctx context.Context, email, org, role, by string) (Invite, string, error) {
	// The password is the accept's to check.
	email, err := checkEmail(email)
	if err != nil {
		return Invite{}, "", err
	}
	nu, err := validateRole(NewUser{Email: email, Org: org, Role: role})
	if err != nil {
		return Invite{}, "", err
	}
	now := s.now().UTC()
	inv := Invite{Email: nu.Email, Org: nu.Org, Role: nu.Role, InvitedBy: by, CreatedAt: now, ExpiresAt: now.Add(InviteTTL)}
	raw, err := json.Marshal(inv)
	if err != nil {
		return Invite{}, "", err
	}
	token := randomToken()
	err = s.db.Update(ctx, func(tx *store.Txn) error {
		if ok, err := tx.Has(userKey(inv.Email)); err != nil || ok {
			if err == nil {
				err = ErrExists
			}
			return err
		}
		if err := s.dropInvites(tx, func(i Invite) bool { return i.Email == inv.Email || !now.Before(i.ExpiresAt) }); err != nil {
			return err
		}
		return tx.Set(inviteKey(token), raw)
	})
	return inv, token, err
}

// dropInvites deletes the stored invites drop selects.
func (s *Service) dropInvites(tx *store.Txn, drop func(Invite) bool) error {
	return deleteWhere(tx, invitePrefix, drop)
}

// deleteWhere deletes, inside tx, every entry below prefix whose value (JSON of a T) drop
// selects, and every entry whose value does not decode.
func deleteWhere[T any](tx *store.Txn, prefix []byte, drop func(T) bool) error {
	var dead [][]byte
	err := tx.Iterate(store.IterOptions{Prefix: prefix}, func(k, v []byte) (bool, error) {
		var x T
		if json.Unmarshal(v, &x) != nil || drop(x) {
			dead = append(dead, append([]byte(nil), k...))
		}
		return true, nil
	})
	if err != nil {
		return err
	}
	for _, k := range dead {
		if err := tx.Delete(k); err != nil {
			return err
		}
	}
	return nil
}

// Invites lists the pending invites of org (every org when empty), newest first.
func (s *Service) Invites(ctx context.Context, org string) ([]Invite, error) {
	now := s.now()
	out := []Invite{}
	err := s.db.View(ctx, func(tx *store.Txn) error {
		return tx.Iterate(store.IterOptions{Prefix: invitePrefix}, func(_, v []byte) (bool, error) {
			var i Invite
			if err := json.Unmarshal(v, &i); err != nil {
				return false, err
			}
			if (org == "" || i.Org == org) && now.Before(i.ExpiresAt) {
				out = append(out, i)
			}
			return true, nil
		})
	})
	sort.SliceStable(out, func(a, b int) bool { return out[a].CreatedAt.After(out[b].CreatedAt) })
	return out, err
}

// RevokeInvite deletes the pending invite of email into org (ErrNoInvite when there is none).
func (s *Service) RevokeInvite(ctx context.Context, org, email string) error {
	email = NormalizeEmail(email)
	return s.db.Update(ctx, func(tx *store.Txn) error {
		found := false
		err := s.dropInvites(tx, func(i Invite) bool {
			hit := i.Org == org && i.Email == email
			found = found || hit
			return hit
		})
		if err == nil && !found {
			err = ErrNoInvite
		}
		return err
	})
}

// AcceptInvite creates the invited user with password and signs it in, in one transaction
// that also deletes the invite (it works once). An unknown or expired token is ErrNoInvite
// and counts as a failure of the client's IP (the sign-in throttle); an email that got an
// account meanwhile is ErrExists.
func (s *Service) AcceptInvite(ctx context.Context, token, password string, from Client) (Session, error) {
	if d := s.byIP.wait(from.IP); d > 0 {
		return Session{}, &ThrottledError{RetryAfter: d}
	}
	var inv Invite
	err := s.db.View(ctx, func(tx *store.Txn) error {
		if token == "" || len(token) > 100 {
			return ErrNoInvite
		}
		raw, err := tx.Get(inviteKey(token))
		if errors.Is(err, store.ErrNotFound) {
			return ErrNoInvite
		}
		if err != nil {
			return err
		}
		return json.Unmarshal(raw, &inv)
	})
	if err == nil && !s.now().Before(inv.ExpiresAt) {
		err = ErrNoInvite
	}
	if errors.Is(err, ErrNoInvite) {
		s.byIP.fail(from.IP)
	}
	if err != nil {
		return Session{}, err
	}
	nu, err := validate(NewUser{Email: inv.Email, Password: password, Org: inv.Org, Role: inv.Role})
	if err != nil {
		return Session{}, err
	}
	hash, err := s.hasher.hash(nu.Password)
	if err != nil {
		return Session{}, err
	}
	st := stored{User: User{Email: nu.Email, Org: nu.Org, Role: nu.Role, CreatedAt: s.now().UTC()}, Hash: hash}
	raw, err := json.Marshal(st)
	if err != nil {
		return Session{}, err
	}
	return s.open(ctx, st.User, from, func(tx *store.Txn) error {
		if ok, err := tx.Has(inviteKey(token)); err != nil || !ok {
			if err == nil {
				err = ErrNoInvite // accepted or revoked meanwhile
			}
			return err
		}
		if ok, err := tx.Has(userKey(nu.Email)); err != nil || ok {
			if err == nil {
				err = ErrExists
			}
			return err
		}
		if err := tx.Delete(inviteKey(token)); err != nil {
			return err
		}
		return tx.Set(userKey(nu.Email), raw)
	})
}
