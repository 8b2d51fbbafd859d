// Package accounts keeps the dashboard's users and their sessions (decisions.md 8.2): each user
// is an operator (every org) or a member of one org with the role owner or member, signs in
// with an email and a password (stored as an argon2id hash), and gets a session token that the
// admin API takes from the gh_session cookie.
//
// Users live under accounts/user/<email>, sessions under accounts/session/<sha256 of token>
// and invites under accounts/invite/<sha256 of token>: no token is ever stored. A user lists
// and ends their own sessions and changes their password (manage.go); an owner invites into
// the org with a role, and the invitee accepts with a password (invite.go). Failed sign-ins
// are throttled per email and per client IP (10 a minute each). The package knows nothing of
// HTTP; edge/admin serves it.
package accounts

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/mail"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gatehouse-dev/gatehouse/edge/store"
)

// Sentinel errors of the package.
var (
	// ErrNotFound is an unknown user.
	ErrNotFound = errors.New("accounts: no such user")
	// ErrExists refuses to create a user whose email is taken.
	ErrExists = errors.New("accounts: a user with this email exists")
	// ErrCredentials is a wrong email or a wrong password (the two are never told apart).
	ErrCredentials = errors.New("accounts: wrong email or password")
	// ErrNoSession is an unknown, expired or ended session, or one whose user is gone.
	ErrNoSession = errors.New("accounts: no such session")
)

// InvalidError names the field of a user that cannot be created.
type InvalidError struct{ Field, Problem string }

func (e *InvalidError) Error() string { return "accounts: " + e.Field + ": " + e.Problem }

// ThrottledError refuses a sign-in after too many failures; RetryAfter is when one more fits.
type ThrottledError struct{ RetryAfter time.Duration }

func (e *ThrottledError) Error() string {
	return fmt.Sprintf("accounts: too many failed sign-ins, retry after %s", e.RetryAfter)
}

// Roles of a member of an org.
const (
	RoleOwner  = "owner"
	RoleMember = "member"
)

// Password length bounds (bytes). The upper bound keeps hashing cheap for hostile input.
const (
	MinPassword = 8
	MaxPassword = 1024
)

// User is a dashboard account as the admin API shows it (never its hash).
type User struct {
	Email     string    `json:"email"`
	Operator  bool      `json:"operator"`
	Org       string    `json:"org,omitempty"`
	Role      string    `json:"role,omitempty"`
	CreatedAt time.Time `json:"createdAt"`
}

// stored is a user with its password hash.
type stored struct {
	User
	Hash string `json:"hash"`
}

// NewUser is what CreateUser takes.
type NewUser struct {
	Email    string
	Password string
	Operator bool
	Org      string
	Role     string
}

// Options configures NewService.
type Options struct {
	// DB is the store holding users and sessions (required).
	DB *store.DB
	// SessionTTL is how long a session lasts after sign-in; DefaultSessionTTL when zero.
	SessionTTL time.Duration
	// Now is the clock; time.Now when nil.
	Now func() time.Time
	// FailuresPerMinute bounds failed sign-ins per email and per IP; DefaultFailures when zero.
	FailuresPerMinute int
	// SharedThrottle, when set, counts the failures of every node together (Redis, for many
	// nodes) as well as this node's memory; it must allow FailuresPerMinute.
	SharedThrottle Throttle
}

// Throttle counts failures per key for all nodes of a deployment (edge/ratelimit/redisrate).
// An error (Redis away) makes the node fall back on its own count.
type Throttle interface {
	// Wait returns how long key must wait before its next attempt (0: it may go now).
	Wait(ctx context.Context, key string) (time.Duration, error)
	// Fail records a failed attempt of key.
	Fail(ctx context.Context, key string) error
}

// Defaults of Options.
const (
	DefaultSessionTTL = 12 * time.Hour
	DefaultFailures   = 10
)

// Service keeps users and sessions in the store.
type Service struct {
	db      *store.DB
	ttl     time.Duration
	now     func() time.Time
	byEmail *throttle
	byIP    *throttle
	hasher  hasher
}

// NewService returns the accounts service over Options.DB (an error without one). It starts
// nothing.
func NewService(o Options) (*Service, error) {
	if o.DB == nil {
		return nil, errors.New("accounts: Options.DB is required")
	}
	if o.SessionTTL <= 0 {
		o.SessionTTL = DefaultSessionTTL
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.FailuresPerMinute <= 0 {
		o.FailuresPerMinute = DefaultFailures
	}
	return &Service{db: o.DB, ttl: o.SessionTTL, now: o.Now,
		byEmail: newThrottle(o.FailuresPerMinute, time.Minute, o.Now, o.SharedThrottle, "email"),
		byIP:    newThrottle(o.FailuresPerMinute, time.Minute, o.Now, o.SharedThrottle, "ip"),
		hasher:  defaultHasher}, nil
}

const root = "accounts"

func userKey(email string) []byte { return store.Key(root, "user", email) }

// NormalizeEmail lower-cases and trims an email address (accounts are found case-insensitively).
func NormalizeEmail(s string) string { return strings.ToLower(strings.TrimSpace(s)) }

// validate checks a new user and returns it normalized.
func validate(u NewUser) (NewUser, error) {
	var err error
	if u.Email, err = checkEmail(u.Email); err != nil {
		return u, err
	}
	if err := checkPassword(u.Password); err != nil {
		return u, err
	}
	return validateRole(u)
}

// checkEmail returns an account's email normalized, or an InvalidError.
func checkEmail(e string) (string, error) {
	e = NormalizeEmail(e)
	if a, err := mail.ParseAddress(e); err != nil || a.Address != e || len(e) > 254 {
		return e, &InvalidError{"email", "must be an email address"}
	}
	return e, nil
}

// checkPassword checks the bounds of a new password.
func checkPassword(p string) error {
	switch {
	case len(p) < MinPassword:
		return &InvalidError{"password", fmt.Sprintf("must be at least %d characters", MinPassword)}
	case len(p) > MaxPassword:
		return &InvalidError{"password", fmt.Sprintf("must be at most %d bytes", MaxPassword)}
	case !utf8.ValidString(p):
		return &InvalidError{"password", "must be valid UTF-8"}
	}
	return nil
}

// validateRole checks that a user is an operator or a member of one org with a role (member
// when empty).
func validateRole(u NewUser) (NewUser, error) {
	if u.Operator {
		if u.Org != "" || u.Role != "" {
			return u, &InvalidError{"operator", "an operator belongs to no org and has no role"}
		}
		return u, nil
	}
	if u.Org == "" {
		return u, &InvalidError{"org", "is required unless operator is true"}
	}
	if u.Role == "" {
		u.Role = RoleMember
	}
	if u.Role != RoleOwner && u.Role != RoleMember {
		return u, &InvalidError{"role", "must be owner or member"}
	}
	return u, nil
}

// CreateUser stores a new user with its password hashed (the org's existence is the caller's
// check). It answers ErrExists when the email is taken.
func (s *Service) CreateUser(ctx context.Context, nu NewUser) (User, error) {
	nu, err := validate(nu)
	if err != nil {
		return User{}, err
	}
	hash, err := s.hasher.hash(nu.Password)
	if err != nil {
		return User{}, err
	}
	st := stored{User: User{Email: nu.Email, Operator: nu.Operator, Org: nu.Org, Role: nu.Role, CreatedAt: s.now().UTC()}, Hash: hash}
	raw, err := json.Marshal(st)
	if err != nil {
		return User{}, err
	}
	err = s.db.Update(ctx, func(tx *store.Txn) error {
		k := userKey(nu.Email)
		if ok, err := tx.Has(k); err != nil || ok {
			if err == nil {
				err = ErrExists
			}
			return err
		}
		return tx.Set(k, raw)
	})
	return st.User, err
}

// User returns a user by email.
func (s *Service) User(ctx context.Context, email string) (User, error) {
	st, err := s.load(ctx, NormalizeEmail(email))
	return st.User, err
}

func (s *Service) load(ctx context.Context, email string) (stored, error) {
	var st stored
	err := s.db.View(ctx, func(tx *store.Txn) error {
		raw, err := tx.Get(userKey(email))
		if errors.Is(err, store.ErrNotFound) {
			return ErrNotFound
		}
		if err != nil {
			return err
		}
		return json.Unmarshal(raw, &st)
	})
	return st, err
}

// Users lists users in email order: every user when org is empty, else the members of org.
func (s *Service) Users(ctx context.Context, org string) ([]User, error) {
	out := []User{}
	err := s.db.View(ctx, func(tx *store.Txn) error {
		return tx.Iterate(store.IterOptions{Prefix: store.Prefix(root, "user")}, func(_, val []byte) (bool, error) {
			var st stored
			if err := json.Unmarshal(val, &st); err != nil {
				return false, err
			}
			if org == "" || st.Org == org {
				out = append(out, st.User)
			}
			return true, nil
		})
	})
	return out, err
}

// Any reports whether at least one user exists.
func (s *Service) Any(ctx context.Context) (bool, error) {
	found := false
	err := s.db.View(ctx, func(tx *store.Txn) error {
		return tx.Iterate(store.IterOptions{Prefix: store.Prefix(root, "user"), KeysOnly: true}, func(_, _ []byte) (bool, error) {
			found = true
			return false, nil
		})
	})
	return found, err
}

// DeleteUser removes a user; its sessions stop working at once (a session is checked against
// its user on every request).
func (s *Service) DeleteUser(ctx context.Context, email string) error {
	email = NormalizeEmail(email)
	return s.db.Update(ctx, func(tx *store.Txn) error {
		k := userKey(email)
		if ok, err := tx.Has(k); err != nil || !ok {
			if err == nil {
				err = ErrNotFound
			}
			return err
		}
		return tx.Delete(k)
	})
}
