package tenancy

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/gatehouse-dev/gatehouse/edge/apikey"
	"github.com/gatehouse-dev/gatehouse/edge/apitime"
	"github.com/gatehouse-dev/gatehouse/edge/journal"
	"github.com/gatehouse-dev/gatehouse/edge/store"
)

// ErrNotFound reports an entity the store does not hold.
var ErrNotFound = errors.New("tenancy: not found")

// Service reads and writes orgs, projects and keys, and applies tenants documents with the
// sections registered by the products.
type Service struct {
	db       *store.DB
	now      func() time.Time
	sections []Section
	applyMu  sync.Mutex
	// Feed records the changes of every write in its transaction and announces them after the
	// commit (SetJournal, Record, OnChange, Notify).
	journal.Feed
}

// Options configures NewService.
type Options struct {
	// DB is the store holding orgs, projects and keys (required).
	DB *store.DB
	// Now is the clock (time.Now when nil).
	Now func() time.Time
}

// NewService returns the tenancy service over Options.DB (an error without one); it starts
// nothing. Register the products' sections before the first apply.
func NewService(o Options) (*Service, error) {
	if o.DB == nil {
		return nil, errors.New("tenancy: Options.DB is required")
	}
	now := o.Now
	if now == nil {
		now = time.Now
	}
	return &Service{db: o.DB, now: now}, nil
}

// Register adds the sections products own. They are checked and applied in registration order
// (an org's sections before its projects). A name registered twice is a wiring error.
func (s *Service) Register(secs ...Section) error {
	s.applyMu.Lock()
	defer s.applyMu.Unlock()
	for _, sec := range secs {
		for _, have := range s.sections {
			if have.Name() == sec.Name() && have.Level() == sec.Level() {
				return fmt.Errorf("tenancy: section %q registered twice", sec.Name())
			}
		}
		s.sections = append(s.sections, sec)
	}
	return nil
}

// Add joins a product to tenancy: its sections are registered and its Changed hears every
// committed change.
func (s *Service) Add(o Owner) error {
	if err := s.Register(o.Sections()...); err != nil {
		return err
	}
	s.OnChange(o.Changed)
	return nil
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

// KeyByHash implements edge/auth's Lookup (its guard is in edge/cmd/gatehouse: tenancy stays
// free of the HTTP middleware).
func (s *Service) KeyByHash(ctx context.Context, hash string) (apikey.Key, error) {
	var k apikey.Key
	err := s.getJSON(ctx, key(kKey, hash), &k)
	if errors.Is(err, ErrNotFound) {
		return k, apikey.ErrUnknownKey
	}
	return k, err
}

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

// Projects returns every project.
func (s *Service) Projects(ctx context.Context) ([]ProjectInfo, error) {
	return listJSON[ProjectInfo](ctx, s, prefix(kProject))
}

// Keys returns every key of an org (never a value).
func (s *Service) Keys(ctx context.Context, org string) ([]apikey.Key, error) {
	all, err := listJSON[apikey.Key](ctx, s, prefix(kKey))
	var out []apikey.Key
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
	spec := KeySpec{Name: r.Name, Kind: r.Kind, Products: r.Products}
	if _, err := s.Org(ctx, r.Org); err != nil {
		return GeneratedKey{}, &InvalidError{Problems: []Problem{{Path: "org", Message: fmt.Sprintf("no org %q", r.Org)}}}
	}
	if r.Project != "" {
		p, err := s.Project(ctx, r.Project)
		if err != nil || p.Org != r.Org {
			return GeneratedKey{}, &InvalidError{Problems: []Problem{{Path: "project", Message: fmt.Sprintf("no project %q in org %q", r.Project, r.Org)}}}
		}
	}
	c := &checker{}
	c.key("key", spec, map[string]string{}, map[string]string{})
	if len(c.problems) > 0 {
		return GeneratedKey{}, &InvalidError{Problems: c.problems}
	}
	proj := r.Project
	if proj == "" {
		proj = noProject
	}
	s.applyMu.Lock()
	defer s.applyMu.Unlock()
	rep := &Report{}
	err := s.db.Update(ctx, func(txn *store.Txn) error {
		if exists, err := txn.Has(key(kKeyName, r.Org, proj, r.Name)); err != nil || exists {
			if exists {
				return &InvalidError{Problems: []Problem{{Path: "name", Message: fmt.Sprintf("a key named %q already exists", r.Name)}}}
			}
			return err
		}
		*rep = Report{}
		a := &applier{txn: txn, now: s.now().UTC().Format(apitime.Layout), report: rep, touched: map[string]bool{}}
		if err := a.key(r.Org, r.Project, spec); err != nil {
			return err
		}
		return s.Record(txn, rep.Changes)
	})
	if err != nil {
		return GeneratedKey{}, err
	}
	if len(rep.Generated) != 1 {
		return GeneratedKey{}, fmt.Errorf("tenancy: key %q was not generated", r.Name)
	}
	s.Notify(ctx, rep.Changes)
	return rep.Generated[0], nil
}

// RevokeKey marks a key revoked; it stops working at once.
func (s *Service) RevokeKey(ctx context.Context, org, project, name string) error {
	proj := project
	if proj == "" {
		proj = noProject
	}
	var changes []journal.Change
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
		var k apikey.Key
		if err := json.Unmarshal(raw, &k); err != nil {
			return err
		}
		k.Revoked = true
		nv, _ := json.Marshal(k)
		changes = []journal.Change{{Op: "updated", Kind: "key", Org: org, Project: project, Name: name, Old: raw, New: nv}}
		if err := txn.Set(key(kKey, string(hash)), nv); err != nil {
			return err
		}
		return s.Record(txn, changes)
	})
	if err == nil {
		s.Notify(ctx, changes)
	}
	return err
}
