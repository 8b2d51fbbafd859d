package tenancy

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/gatehouse-dev/gatehouse/edge/apikey"
	"github.com/gatehouse-dev/gatehouse/edge/apitime"
	"github.com/gatehouse-dev/gatehouse/edge/journal"
	"github.com/gatehouse-dev/gatehouse/edge/store"
)

// GeneratedKey is a key value the apply generated: shown once, never stored in clear.
type GeneratedKey struct {
	Org     string `json:"org"`
	Project string `json:"project,omitempty"`
	Name    string `json:"name"`
	Value   string `json:"value"`
}

// Report says what an apply changed.
type Report struct {
	Changed   bool             `json:"changed"`
	Created   int              `json:"created"`
	Updated   int              `json:"updated"`
	Deleted   int              `json:"deleted"`
	Unchanged int              `json:"unchanged"`
	Changes   []journal.Change `json:"changes"`
	Generated []GeneratedKey   `json:"generatedKeys,omitempty"`
	// Secrets are other secrets the apply generated (webhook signing secrets): shown once.
	Secrets []GeneratedSecret `json:"generatedSecrets,omitempty"`
}

// GeneratedSecret is a secret a section generated for an entity the document left without one.
type GeneratedSecret struct {
	Org     string `json:"org,omitempty"`
	Project string `json:"project,omitempty"`
	Kind    string `json:"kind"`
	Name    string `json:"name"`
	Value   string `json:"value"`
}

// ErrKeyTaken reports a key value that another key (of another name or org) already has.
var ErrKeyTaken = errors.New("tenancy: key value already belongs to another key")

type applier struct {
	txn     *store.Txn
	now     string
	report  *Report
	touched map[string]bool
}

// writer returns a Writer over the applier scoped to org and project.
func (a *applier) writer(org, project string) *Writer {
	return &Writer{Txn: a.txn, Org: org, Project: project, Now: a.now, a: a}
}

// Apply validates doc (with every registered section, unless this service's Parse read it)
// and writes it in one transaction: upserts
// by slug/name/id, deletes only with doc.Prune. Applying the same document twice reports no
// change the second time.
func (s *Service) Apply(ctx context.Context, doc *Document) (*Report, error) {
	if doc.checkedBy != s {
		if err := s.Validate(doc); err != nil {
			return nil, err
		}
	}
	if err := s.vet(ctx, doc); err != nil {
		return nil, err
	}
	s.applyMu.Lock()
	defer s.applyMu.Unlock()
	var rep *Report
	err := s.db.Update(ctx, func(txn *store.Txn) error {
		rep = &Report{Changes: []journal.Change{}}
		a := &applier{txn: txn, now: s.now().UTC().Format(apitime.Layout), report: rep, touched: map[string]bool{}}
		if err := s.document(a, doc); err != nil {
			return err
		}
		if doc.Prune {
			if err := s.prune(a); err != nil {
				return err
			}
		}
		if rep.Created+rep.Updated+rep.Deleted == 0 {
			return nil // nothing changed: nothing to announce (see below)
		}
		return s.Record(txn, rep.Changes)
	})
	if errors.Is(err, store.ErrTooBig) {
		return nil, fmt.Errorf("%w (%v)", ErrTooManyChanges, err)
	}
	if err != nil {
		return nil, err
	}
	rep.Changed = rep.Created+rep.Updated+rep.Deleted > 0
	if rep.Changed {
		s.Notify(ctx, rep.Changes)
	}
	return rep, nil
}

func (s *Service) document(a *applier, doc *Document) error {
	for _, o := range doc.Orgs {
		w := a.writer(o.Slug, "")
		if err := w.Put(key(kOrg, o.Slug), "org", "", OrgInfo{Slug: o.Slug, Name: o.Name}); err != nil {
			return err
		}
		for _, k := range o.Keys {
			if err := a.key(o.Slug, "", k); err != nil {
				return err
			}
		}
		for _, sec := range s.sections {
			if sec.Level() != OrgLevel {
				continue
			}
			if err := sec.Apply(w, o.Sections[sec.Name()]); err != nil {
				return fmt.Errorf("%s of org %s: %w", sec.Name(), o.Slug, err)
			}
		}
		for _, p := range o.Projects {
			if err := s.project(a, o.Slug, p); err != nil {
				return err
			}
		}
	}
	return nil
}

func (s *Service) project(a *applier, org string, p Project) error {
	if raw, err := a.txn.Get(key(kProject, p.ID)); err == nil {
		var prev ProjectInfo
		if json.Unmarshal(raw, &prev) == nil && prev.Org != org {
			return &InvalidError{Problems: []Problem{{Path: "project " + p.ID, Message: "id already belongs to org " + prev.Org}}}
		}
	}
	w := a.writer("", p.ID)
	if err := w.Put(key(kProject, p.ID), "project", "", ProjectInfo{ID: p.ID, Org: org, Name: p.Name}); err != nil {
		return err
	}
	for _, k := range p.Keys {
		if err := a.key(org, p.ID, k); err != nil {
			return err
		}
	}
	for _, sec := range s.sections {
		if sec.Level() != ProjectLevel {
			continue
		}
		if err := sec.Apply(w, p.Sections[sec.Name()]); err != nil {
			return fmt.Errorf("%s of project %s: %w", sec.Name(), p.ID, err)
		}
	}
	return nil
}

// key upserts one API key. A given value is stored by hash; a missing value keeps the existing
// key of that name or generates a new one, reported once.
func (a *applier) key(org, project string, k KeySpec) error {
	proj := project
	if proj == "" {
		proj = noProject
	}
	w := &Writer{Txn: a.txn, Org: org, Project: project, Now: a.now, a: a}
	nameKey := key(kKeyName, org, proj, k.Name)
	w.Touch(nameKey)
	prevHash, err := a.txn.Get(nameKey)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return err
	}
	var hash string
	var kind apikey.Kind
	var test bool
	switch {
	case k.Value != "":
		hash = apikey.Hash(k.Value)
		kind, test, _ = apikey.KindOf(k.Value)
	case prevHash != nil:
		hash = string(prevHash)
		raw, err := a.txn.Get(key(kKey, hash))
		if err != nil {
			return err
		}
		var prev apikey.Key
		if err := json.Unmarshal(raw, &prev); err != nil {
			return err
		}
		kind, test = prev.Kind, prev.Test
	default:
		value, err := NewKeyValue(k.Kind)
		if err != nil {
			return err
		}
		hash = apikey.Hash(value)
		kind, test, _ = apikey.KindOf(value)
		a.report.Generated = append(a.report.Generated, GeneratedKey{Org: org, Project: project, Name: k.Name, Value: value})
	}
	// A value already held by another key is refused, never silently moved.
	if raw, err := a.txn.Get(key(kKey, hash)); err == nil {
		var other apikey.Key
		if json.Unmarshal(raw, &other) == nil && (other.Org != org || other.Project != project || other.Name != k.Name) {
			return &InvalidError{Problems: []Problem{{Path: keyPath(org, project, k.Name), Message: "value already belongs to key " + keyPath(other.Org, other.Project, other.Name)}}}
		}
	}
	if prevHash != nil && string(prevHash) != hash {
		// Rotation: the old value stops working.
		if err := w.keyChange().Delete(key(kKey, string(prevHash)), "key", k.Name); err != nil {
			return err
		}
	}
	revoked := k.Revoked
	if !revoked && string(prevHash) == hash {
		// A revocation (admin API or an earlier document) holds until the document gives the
		// key a new value: re-applying a document that still lists the key never revives it.
		if revoked, err = a.wasRevoked(hash); err != nil {
			return err
		}
	}
	rec := apikey.Key{Hash: hash, Name: k.Name, Org: org, Project: project, Kind: kind, Test: test, Products: k.Products, Revoked: revoked}
	if err := w.keyChange().Put(key(kKey, hash), "key", k.Name, rec); err != nil {
		return err
	}
	if string(prevHash) != hash {
		return a.txn.Set(nameKey, []byte(hash))
	}
	return nil
}

// keyChange returns a writer whose changes name org, project and key (keys belong to both).
func (w *Writer) keyChange() *Writer {
	c := *w
	c.keyScope = true
	return &c
}

// wasRevoked reports whether the stored key with this hash is revoked.
func (a *applier) wasRevoked(hash string) (bool, error) {
	raw, err := a.txn.Get(key(kKey, hash))
	if errors.Is(err, store.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	var prev apikey.Key
	if err := json.Unmarshal(raw, &prev); err != nil {
		return false, err
	}
	return prev.Revoked, nil
}

func keyPath(org, project, name string) string {
	return journal.Change{Org: org, Project: project, Name: name}.Path()
}

// prune deletes every document-managed entity the document did not mention: orgs, projects and
// keys here, then each section's own.
func (s *Service) prune(a *applier) error {
	w := a.writer("", "")
	err := w.Untouched(prefix(kOrg), func(k, _ []byte) error {
		return w.In(store.LastPart(k), "").Delete(k, "org", "")
	})
	if err != nil {
		return err
	}
	err = w.Untouched(prefix(kProject), func(k, _ []byte) error {
		return w.In("", store.LastPart(k)).Delete(k, "project", "")
	})
	if err != nil {
		return err
	}
	// A key record goes with its name entry tenancy/keyname/<org>/<project|->/<name>.
	err = w.Untouched(prefix(kKeyName), func(k, hash []byte) error {
		parts := strings.SplitN(strings.TrimPrefix(string(k), string(prefix(kKeyName))), "/", 3)
		if len(parts) != 3 {
			return nil
		}
		project := parts[1]
		if project == noProject {
			project = ""
		}
		kw := w.In(parts[0], project).keyChange()
		if err := kw.Delete(key(kKey, string(hash)), "key", parts[2]); err != nil {
			return err
		}
		return a.txn.Delete(k)
	})
	if err != nil {
		return err
	}
	for _, sec := range s.sections {
		if err := sec.Prune(w); err != nil {
			return fmt.Errorf("prune %s: %w", sec.Name(), err)
		}
	}
	return nil
}

// NewKeyValue generates a key value of kind publishable, secret or test: the prefix and 32
// random URL-safe characters.
func NewKeyValue(kind string) (string, error) {
	var b [24]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	rnd := strings.NewReplacer("-", "x", "_", "y").Replace(base64.RawURLEncoding.EncodeToString(b[:]))
	switch kind {
	case "publishable":
		return apikey.PrefixLive + rnd, nil
	case "secret":
		return apikey.PrefixSecret + rnd, nil
	case "test":
		return apikey.PrefixTest + rnd, nil
	}
	return "", fmt.Errorf("tenancy: unknown key kind %q", kind)
}
