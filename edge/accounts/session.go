package accounts

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/gatehouse-dev/gatehouse/edge/store"
)

// Session is a signed-in user: Token goes into the gh_session cookie, CSRFToken into the
// X-CSRF-Token header of every state-changing request.
type Session struct {
	Token     string
	CSRFToken string
	User      User
	ExpiresAt time.Time
}

// storedSession is a session as kept in the store (keyed by the token's hash).
type storedSession struct {
	Email     string    `json:"email"`
	CSRF      string    `json:"csrf"`
	ExpiresAt time.Time `json:"expiresAt"`
	CreatedAt time.Time `json:"createdAt,omitzero"`
	IP        string    `json:"ip,omitempty"`
	UserAgent string    `json:"userAgent,omitempty"`
}

// Client is where a sign-in comes from, kept with the session so its user can tell their
// sessions apart (the list of one's sessions).
type Client struct {
	IP        string
	UserAgent string
}

// MaxUserAgent bounds the user agent kept with a session (bytes).
const MaxUserAgent = 256

// sessionID is the public name of a session: the hex SHA-256 of its token, which is also its
// key. It names the session in the list of one's sessions; it cannot be used to sign in.
func sessionID(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

func sessionKey(token string) []byte { return store.Key(root, "session", sessionID(token)) }

func randomToken() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // crypto/rand does not fail
	return base64.RawURLEncoding.EncodeToString(b)
}

// Login checks an email and password and opens a session. A wrong email and a wrong password
// both answer ErrCredentials after the same work (an unknown email is checked against a dummy
// hash). After too many failures for the email or for the client's IP it answers
// *ThrottledError without checking anything.
func (s *Service) Login(ctx context.Context, email, password string, from Client) (Session, error) {
	email = NormalizeEmail(email)
	ip := from.IP
	if d := max(s.byEmail.wait(email), s.byIP.wait(ip)); d > 0 {
		return Session{}, &ThrottledError{RetryAfter: d}
	}
	// A password over the limit never matches (CreateUser refuses it): it is checked, cut to
	// the limit, against the dummy hash, so the work stays bounded and the same.
	tooLong := len(password) > MaxPassword
	if tooLong {
		password = password[:MaxPassword]
	}
	st, err := s.load(ctx, email)
	hash := st.Hash
	if errors.Is(err, ErrNotFound) || tooLong {
		hash = s.hasher.dummy
	} else if err != nil {
		return Session{}, err
	}
	ok, verr := verify(hash, password)
	if err != nil || tooLong || verr != nil || !ok {
		s.byEmail.fail(email)
		s.byIP.fail(ip)
		return Session{}, ErrCredentials
	}
	return s.open(ctx, st.User, from, nil)
}

// open starts a session of u; also, in the same transaction, runs also (may be nil).
func (s *Service) open(ctx context.Context, u User, from Client, also func(tx *store.Txn) error) (Session, error) {
	now := s.now().UTC()
	sess := Session{Token: randomToken(), CSRFToken: randomToken(), User: u, ExpiresAt: now.Add(s.ttl)}
	ua := from.UserAgent
	if len(ua) > MaxUserAgent {
		ua = strings.ToValidUTF8(ua[:MaxUserAgent], "")
	}
	raw, err := json.Marshal(storedSession{Email: u.Email, CSRF: sess.CSRFToken, ExpiresAt: sess.ExpiresAt,
		CreatedAt: now, IP: from.IP, UserAgent: ua})
	if err != nil {
		return Session{}, err
	}
	err = s.db.Update(ctx, func(tx *store.Txn) error {
		if also != nil {
			if err := also(tx); err != nil {
				return err
			}
		}
		if err := s.sweep(tx); err != nil {
			return err
		}
		return tx.Set(sessionKey(sess.Token), raw)
	})
	return sess, err
}

// sweep deletes expired sessions (run at each sign-in, so ended sessions do not pile up).
func (s *Service) sweep(tx *store.Txn) error {
	now := s.now()
	return deleteWhere(tx, store.Prefix(root, "session"), func(ss storedSession) bool { return !now.Before(ss.ExpiresAt) })
}

// Session returns the open session of token with its user as stored now (a deleted user's
// sessions end; a changed role applies at once). ErrNoSession when there is none.
func (s *Service) Session(ctx context.Context, token string) (Session, error) {
	if token == "" || len(token) > 100 {
		return Session{}, ErrNoSession
	}
	var ss storedSession
	err := s.db.View(ctx, func(tx *store.Txn) error {
		raw, err := tx.Get(sessionKey(token))
		if errors.Is(err, store.ErrNotFound) {
			return ErrNoSession
		}
		if err != nil {
			return err
		}
		return json.Unmarshal(raw, &ss)
	})
	if err != nil {
		return Session{}, err
	}
	if !s.now().Before(ss.ExpiresAt) {
		return Session{}, ErrNoSession
	}
	st, err := s.load(ctx, ss.Email)
	if errors.Is(err, ErrNotFound) {
		return Session{}, ErrNoSession
	}
	if err != nil {
		return Session{}, err
	}
	return Session{Token: token, CSRFToken: ss.CSRF, User: st.User, ExpiresAt: ss.ExpiresAt}, nil
}

// Logout ends the session of token (no error when there is none).
func (s *Service) Logout(ctx context.Context, token string) error {
	if token == "" {
		return nil
	}
	return s.db.Update(ctx, func(tx *store.Txn) error { return tx.Delete(sessionKey(token)) })
}
