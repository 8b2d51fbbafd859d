package accounts

import (
	"context"
	"encoding/json"
	"errors"
	"sort"
	"time"

	"github.com/gatehouse-dev/gatehouse/edge/store"
)

// SessionInfo is one open session as its user sees it in the list of their sessions: never
// its token or CSRF token. ID names it for ending it.
type SessionInfo struct {
	ID        string    `json:"id"`
	CreatedAt time.Time `json:"createdAt,omitzero"`
	ExpiresAt time.Time `json:"expiresAt"`
	IP        string    `json:"ip,omitempty"`
	UserAgent string    `json:"userAgent,omitempty"`
	// Current marks the session the list was asked with.
	Current bool `json:"current"`
}

// eachSession calls fn, inside tx, with the id and value of every open session of email.
func (s *Service) eachSession(tx *store.Txn, email string, fn func(id string, ss storedSession) error) error {
	now := s.now()
	type found struct {
		id string
		ss storedSession
	}
	var all []found
	err := tx.Iterate(store.IterOptions{Prefix: store.Prefix(root, "session")}, func(k, v []byte) (bool, error) {
		var ss storedSession
		if json.Unmarshal(v, &ss) != nil || ss.Email != email || !now.Before(ss.ExpiresAt) {
			return true, nil
		}
		all = append(all, found{store.LastPart(k), ss})
		return true, nil
	})
	if err != nil {
		return err
	}
	for _, f := range all {
		if err := fn(f.id, f.ss); err != nil {
			return err
		}
	}
	return nil
}

// Sessions lists the open sessions of email, newest first; current (a session token, may be
// empty) marks the caller's own.
func (s *Service) Sessions(ctx context.Context, email, current string) ([]SessionInfo, error) {
	email = NormalizeEmail(email)
	cur := ""
	if current != "" {
		cur = sessionID(current)
	}
	out := []SessionInfo{}
	err := s.db.View(ctx, func(tx *store.Txn) error {
		return s.eachSession(tx, email, func(id string, ss storedSession) error {
			out = append(out, SessionInfo{ID: id, CreatedAt: ss.CreatedAt, ExpiresAt: ss.ExpiresAt, IP: ss.IP, UserAgent: ss.UserAgent, Current: id == cur})
			return nil
		})
	})
	sort.SliceStable(out, func(i, j int) bool { return out[i].CreatedAt.After(out[j].CreatedAt) })
	return out, err
}

// EndSession ends the session id of email; ErrNoSession when email has no such open session
// (another user's session is never named).
func (s *Service) EndSession(ctx context.Context, email, id string) error {
	email = NormalizeEmail(email)
	if len(id) != 64 {
		return ErrNoSession
	}
	return s.db.Update(ctx, func(tx *store.Txn) error {
		k := store.Key(root, "session", id)
		raw, err := tx.Get(k)
		if errors.Is(err, store.ErrNotFound) {
			return ErrNoSession
		}
		if err != nil {
			return err
		}
		var ss storedSession
		if json.Unmarshal(raw, &ss) != nil || ss.Email != email {
			return ErrNoSession
		}
		return tx.Delete(k)
	})
}

// EndOtherSessions ends every session of email but keep (a session token; empty ends them
// all) and answers how many ended.
func (s *Service) EndOtherSessions(ctx context.Context, email, keep string) (int, error) {
	var n int
	err := s.db.Update(ctx, func(tx *store.Txn) error {
		var err error
		n, err = s.endOthers(tx, NormalizeEmail(email), keep)
		return err
	})
	return n, err
}

func (s *Service) endOthers(tx *store.Txn, email, keep string) (int, error) {
	keepID := ""
	if keep != "" {
		keepID = sessionID(keep)
	}
	n := 0
	err := s.eachSession(tx, email, func(id string, _ storedSession) error {
		if id == keepID {
			return nil
		}
		n++
		return tx.Delete(store.Key(root, "session", id))
	})
	return n, err
}

// ChangePassword replaces the password of email after checking the current one, and ends
// every other session of the user (keep, the caller's session token, stays open). A wrong
// current password is ErrCredentials and counts as a failed sign-in for the email (the same
// throttle, so a stolen session cannot guess the password faster than the sign-in page).
func (s *Service) ChangePassword(ctx context.Context, email, current, next, keep string) error {
	email = NormalizeEmail(email)
	if d := s.byEmail.wait(email); d > 0 {
		return &ThrottledError{RetryAfter: d}
	}
	st, err := s.load(ctx, email)
	if err != nil {
		return err
	}
	if len(current) > MaxPassword {
		current = ""
	}
	if ok, err := verify(st.Hash, current); err != nil || !ok {
		s.byEmail.fail(email)
		return ErrCredentials
	}
	if err := checkPassword(next); err != nil {
		return err
	}
	hash, err := s.hasher.hash(next)
	if err != nil {
		return err
	}
	st.Hash = hash
	raw, err := json.Marshal(st)
	if err != nil {
		return err
	}
	return s.db.Update(ctx, func(tx *store.Txn) error {
		if ok, err := tx.Has(userKey(email)); err != nil || !ok {
			if err == nil {
				err = ErrNotFound
			}
			return err
		}
		if err := tx.Set(userKey(email), raw); err != nil {
			return err
		}
		_, err := s.endOthers(tx, email, keep)
		return err
	})
}

// SetRole gives a member of an org another role (owner or member); it applies to the user's
// open sessions at once. An operator has no role (*InvalidError).
func (s *Service) SetRole(ctx context.Context, email, role string) (User, error) {
	email = NormalizeEmail(email)
	if role != RoleOwner && role != RoleMember {
		return User{}, &InvalidError{"role", "must be owner or member"}
	}
	var out User
	err := s.db.Update(ctx, func(tx *store.Txn) error {
		raw, err := tx.Get(userKey(email))
		if errors.Is(err, store.ErrNotFound) {
			return ErrNotFound
		}
		if err != nil {
			return err
		}
		var st stored
		if err := json.Unmarshal(raw, &st); err != nil {
			return err
		}
		if st.Operator {
			return &InvalidError{"role", "an operator has no role"}
		}
		st.Role = role
		out = st.User
		nv, err := json.Marshal(st)
		if err != nil {
			return err
		}
		return tx.Set(userKey(email), nv)
	})
	return out, err
}
