package tenancy

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/gatehouse-dev/gatehouse/edge/auth"
	"github.com/gatehouse-dev/gatehouse/edge/store"
)

// ErrNotFound reports an entity the store does not hold.
var ErrNotFound = errors.New("tenancy: not found")

// Service reads and writes everything tenancy holds.
type Service struct {
	db        *store.DB
	now       func() time.Time
	hooks     []TxHook
	applyMu   sync.Mutex
	listenMu  sync.RWMutex
	listeners []func(ctx context.Context, changes []Change)
	// pluginCheck vets plugins before an apply or upload stores them (plugincheck.go).
	pluginCheck PluginChecker
}

// Options configures New.
type Options struct {
	// Now is the clock (time.Now when nil).
	Now func() time.Time
	// Hooks run inside every apply's transaction.
	Hooks []TxHook
}

// New returns the tenancy service over db.
func New(db *store.DB, opts Options) *Service {
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	return &Service{db: db, now: now, hooks: opts.Hooks}
}

// OnChange registers fn to run after every committed change (cache invalidation). It is called
// after the commit, with what changed.
func (s *Service) OnChange(fn func(ctx context.Context, changes []Change)) {
	s.listenMu.Lock()
	defer s.listenMu.Unlock()
	s.listeners = append(s.listeners, fn)
}

func (s *Service) changed(ctx context.Context, changes []Change) {
	s.listenMu.RLock()
	defer s.listenMu.RUnlock()
	for _, fn := range s.listeners {
		fn(ctx, changes)
	}
}

// getJSON reads and decodes the value at k, mapping a missing key to ErrNotFound.
func (s *Service) getJSON(ctx context.Context, k []byte, v any) error {
	return s.db.View(ctx, func(txn *store.Txn) error {
		raw, err := txn.Get(k)
		if errors.Is(err, store.ErrNotFound) {
			return ErrNotFound
		}
		if err != nil {
			return err
		}
		return json.Unmarshal(raw, v)
	})
}

// listJSON decodes every value below prefix p, in key order.
func listJSON[T any](ctx context.Context, s *Service, p []byte) ([]T, error) {
	var out []T
	err := s.db.View(ctx, func(txn *store.Txn) error {
		return txn.Iterate(store.IterOptions{Prefix: p}, func(_, v []byte) (bool, error) {
			var t T
			if err := json.Unmarshal(v, &t); err != nil {
				return false, err
			}
			out = append(out, t)
			return true, nil
		})
	})
	return out, err
}

// KeyByHash implements auth.Lookup.
func (s *Service) KeyByHash(ctx context.Context, hash string) (auth.Key, error) {
	var k auth.Key
	err := s.getJSON(ctx, key(kKey, hash), &k)
	if errors.Is(err, ErrNotFound) {
		return k, auth.ErrUnknownKey
	}
	return k, err
}

var _ auth.Lookup = (*Service)(nil)

// Org returns an org by slug.
func (s *Service) Org(ctx context.Context, slug string) (OrgInfo, error) {
	var o OrgInfo
	return o, s.getJSON(ctx, key(kOrg, slug), &o)
}

// Project returns a project by id.
func (s *Service) Project(ctx context.Context, id string) (ProjectInfo, error) {
	var p ProjectInfo
	return p, s.getJSON(ctx, key(kProject, id), &p)
}

// Form returns a project's form by slug.
func (s *Service) Form(ctx context.Context, project, slug string) (Form, error) {
	var f Form
	return f, s.getJSON(ctx, key(kForm, project, slug), &f)
}

// Template returns a project's email template by slug.
func (s *Service) Template(ctx context.Context, project, slug string) (Template, error) {
	var t Template
	return t, s.getJSON(ctx, key(kTemplate, project, slug), &t)
}

// Connections returns a project's membership connections.
func (s *Service) Connections(ctx context.Context, project string) ([]Connection, error) {
	return listJSON[Connection](ctx, s, prefix(kConnection, project))
}

// ActiveConnection returns the project's active connection, or ErrNotFound.
func (s *Service) ActiveConnection(ctx context.Context, project string) (Connection, error) {
	cs, err := s.Connections(ctx, project)
	if err != nil {
		return Connection{}, err
	}
	for _, c := range cs {
		if c.Active {
			return c, nil
		}
	}
	return Connection{}, ErrNotFound
}

// Collection returns a project's collection definition.
func (s *Service) Collection(ctx context.Context, project, name string) (Collection, error) {
	var c Collection
	return c, s.getJSON(ctx, key(kCollection, project, name), &c)
}

// Collections returns every collection of a project.
func (s *Service) Collections(ctx context.Context, project string) ([]Collection, error) {
	return listJSON[Collection](ctx, s, prefix(kCollection, project))
}

// Records returns the records of a collection that the tenants document loaded, in id order.
func (s *Service) Records(ctx context.Context, project, collection string) ([]StoredRecord, error) {
	return listJSON[StoredRecord](ctx, s, prefix(kRecord, project, collection))
}

// Plugins returns a project's plugin registrations.
func (s *Service) Plugins(ctx context.Context, project string) ([]Plugin, error) {
	return listJSON[Plugin](ctx, s, prefix(kPlugin, project))
}

// Projects returns every project.
func (s *Service) Projects(ctx context.Context) ([]ProjectInfo, error) {
	return listJSON[ProjectInfo](ctx, s, prefix(kProject))
}

// Keys returns every key of an org (never a value).
func (s *Service) Keys(ctx context.Context, org string) ([]auth.Key, error) {
	all, err := listJSON[auth.Key](ctx, s, prefix(kKey))
	var out []auth.Key
	for _, k := range all {
		if k.Org == org {
			out = append(out, k)
		}
	}
	return out, err
}

// KeyRequest asks for a new generated key.
type KeyRequest struct {
	Org      string
	Project  string // empty for an org-only key
	Name     string // generated when empty
	Kind     string // publishable | secret | test
	Products []string
}

// CreateKey generates a key, stores its hash and returns the value: the only time it is shown.
func (s *Service) CreateKey(ctx context.Context, r KeyRequest) (GeneratedKey, error) {
	if r.Name == "" {
		var b [4]byte
		_, _ = rand.Read(b[:])
		r.Name = fmt.Sprintf("%s-%x", r.Kind, b)
	}
	org := Org{Slug: r.Org, Keys: nil}
	spec := KeySpec{Name: r.Name, Kind: r.Kind, Products: r.Products}
	info, err := s.Org(ctx, r.Org)
	if err != nil {
		return GeneratedKey{}, &InvalidError{Problems: []Problem{{Path: "org", Message: fmt.Sprintf("no org %q", r.Org)}}}
	}
	org.Name = info.Name
	if r.Project == "" {
		org.Keys = []KeySpec{spec}
	} else {
		p, err := s.Project(ctx, r.Project)
		if err != nil || p.Org != r.Org {
			return GeneratedKey{}, &InvalidError{Problems: []Problem{{Path: "project", Message: fmt.Sprintf("no project %q in org %q", r.Project, r.Org)}}}
		}
		org.Projects = []Project{s.projectShell(p, spec)}
	}
	exists := false
	_ = s.db.View(ctx, func(txn *store.Txn) error {
		proj := r.Project
		if proj == "" {
			proj = noProject
		}
		exists, _ = txn.Has(key(kKeyName, r.Org, proj, r.Name))
		return nil
	})
	if exists {
		return GeneratedKey{}, &InvalidError{Problems: []Problem{{Path: "name", Message: fmt.Sprintf("a key named %q already exists", r.Name)}}}
	}
	rep, err := s.Apply(ctx, &Document{Orgs: []Org{org}})
	if err != nil {
		return GeneratedKey{}, err
	}
	if len(rep.Generated) != 1 {
		return GeneratedKey{}, fmt.Errorf("tenancy: key %q was not generated", r.Name)
	}
	return rep.Generated[0], nil
}

// projectShell is a document project that restates p's own settings and adds one key, so an
// apply of it changes nothing else.
func (s *Service) projectShell(p ProjectInfo, k KeySpec) Project {
	out := Project{ID: p.ID, Name: p.Name, Captcha: p.Captcha, Keys: []KeySpec{k}}
	if p.Email != nil {
		out.Email = &EmailSettings{From: p.Email.From, ReplyTo: p.Email.ReplyTo}
	}
	return out
}

// RevokeKey marks a key revoked; it stops working at once.
func (s *Service) RevokeKey(ctx context.Context, org, project, name string) error {
	proj := project
	if proj == "" {
		proj = noProject
	}
	var change Change
	err := s.db.Update(ctx, func(txn *store.Txn) error {
		hash, err := txn.Get(key(kKeyName, org, proj, name))
		if errors.Is(err, store.ErrNotFound) {
			return ErrNotFound
		}
		if err != nil {
			return err
		}
		raw, err := txn.Get(key(kKey, string(hash)))
		if err != nil {
			return err
		}
		var k auth.Key
		if err := json.Unmarshal(raw, &k); err != nil {
			return err
		}
		k.Revoked = true
		nv, _ := json.Marshal(k)
		change = Change{Op: "updated", Kind: "key", Path: keyPath(org, project, name), Old: raw, New: nv}
		return txn.Set(key(kKey, string(hash)), nv)
	})
	if err == nil {
		s.changed(ctx, []Change{change})
	}
	return err
}

// IsSuppressed reports whether addr is on org's suppression list (case-insensitive).
func (s *Service) IsSuppressed(ctx context.Context, org, addr string) (bool, error) {
	var ok bool
	err := s.db.View(ctx, func(txn *store.Txn) error {
		var err error
		ok, err = txn.Has(key(kSuppress, org, strings.ToLower(strings.TrimSpace(addr))))
		return err
	})
	return ok, err
}

// Suppress adds addr to org's suppression list (source bounce, complaint or admin).
func (s *Service) Suppress(ctx context.Context, org, addr, source, reason string) error {
	lower := strings.ToLower(strings.TrimSpace(addr))
	v, _ := json.Marshal(Suppression{Email: lower, Source: source, Reason: reason, At: s.now().UTC().Format(TimeFormat)})
	return s.db.Update(ctx, func(txn *store.Txn) error { return txn.Set(key(kSuppress, org, lower), v) })
}

// Unsuppress removes addr from org's suppression list.
func (s *Service) Unsuppress(ctx context.Context, org, addr string) error {
	lower := strings.ToLower(strings.TrimSpace(addr))
	return s.db.Update(ctx, func(txn *store.Txn) error { return txn.Delete(key(kSuppress, org, lower)) })
}

// Suppressions lists org's suppression list in address order.
func (s *Service) Suppressions(ctx context.Context, org string) ([]Suppression, error) {
	return listJSON[Suppression](ctx, s, prefix(kSuppress, org))
}

// Secret returns a server-wide random secret of n bytes stored under name, creating it on first
// use (the cursor and upload-URL signing keys), so signatures survive restarts.
func (s *Service) Secret(ctx context.Context, name string, n int) ([]byte, error) {
	var out []byte
	err := s.db.Update(ctx, func(txn *store.Txn) error {
		v, err := txn.Get(key(kMeta, name))
		if err == nil {
			out = v
			return nil
		}
		if !errors.Is(err, store.ErrNotFound) {
			return err
		}
		out = make([]byte, n)
		if _, err := rand.Read(out); err != nil {
			return err
		}
		return txn.Set(key(kMeta, name), out)
	})
	return out, err
}
