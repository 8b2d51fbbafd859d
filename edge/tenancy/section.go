package tenancy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/gatehouse-dev/gatehouse/edge/journal"
	"github.com/gatehouse-dev/gatehouse/edge/store"
	"github.com/gatehouse-dev/gatehouse/edge/yamldoc"
)

// Level says where a section's key sits in the document.
type Level int

const (
	// ProjectLevel sections are keys of a project (forms, email, collections, ...).
	ProjectLevel Level = iota
	// OrgLevel sections are keys of an org (suppressions).
	OrgLevel
)

// Section is one product's part of the tenants document: a key of every org or project that the
// product validates and applies itself, in its own key space, inside the apply's transaction.
// The product declares it; edge/cmd/gatehouse registers it with Service.Register.
type Section interface {
	// Name is the document key the section owns ("forms", "email", "collections", ...).
	Name() string
	// Level says whether the key belongs to orgs or to projects.
	Level() Level
	// Check validates the key's value raw (nil when absent) of one org or project, adding a
	// problem with its path for each bad entry.
	Check(c *Check, raw json.RawMessage)
	// Apply writes the key's value raw (nil when absent) of one org or project. An error aborts
	// the whole apply.
	Apply(w *Writer, raw json.RawMessage) error
	// Prune deletes what the section stores for the document that the apply did not touch.
	Prune(w *Writer) error
}

// Names that slugs and names of the document follow.
var (
	slugRe = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,62}$`)
	nameRe = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{0,62}$`)
)

// IsSlug reports a lower-case slug: 1-63 lower-case letters, digits, - or _, starting with a
// letter or digit (org slugs, project ids, form and template slugs).
func IsSlug(s string) bool { return slugRe.MatchString(s) }

// IsName reports a name: 1-63 letters, digits, - or _, starting with a letter or digit (keys,
// connections, collections, plugins).
func IsName(s string) bool { return nameRe.MatchString(s) }

// Check collects the problems of one section of one org or project.
type Check struct {
	// Path is the section's path in the document: "orgs[0].projects[1].forms".
	Path string
	// Org and Project name where the section sits (Project is empty at org level).
	Org, Project string
	siblings     map[string]json.RawMessage
	problems     *[]Problem
}

// Add reports a problem at Path+sub (sub is "", "[0].slug", ".from", ...).
func (c *Check) Add(sub, format string, args ...any) {
	*c.problems = append(*c.problems, Problem{Path: c.Path + sub, Message: fmt.Sprintf(format, args...)})
}

// Decode decodes raw into v as the document reader does (unknown keys and values of the wrong
// type refused); each problem is reported at its path below Path and Decode returns false.
func (c *Check) Decode(raw json.RawMessage, v any) bool {
	if len(raw) == 0 {
		return true
	}
	_, err := yamldoc.Decode(raw, v)
	if err == nil {
		return true
	}
	var de *yamldoc.Error
	if !errors.As(err, &de) {
		c.Add("", "%v", err)
		return false
	}
	for _, p := range de.Problems {
		sub := p.Path
		if sub != "" && !strings.HasPrefix(sub, "[") {
			sub = "." + sub
		}
		c.Add(sub, "%s", p.Message)
	}
	return false
}

// Sibling returns the raw value of another key of the same org or project (nil when absent),
// for references between sections (a form's captcha plugin names an entry of plugins).
func (c *Check) Sibling(name string) json.RawMessage { return c.siblings[name] }

// Unique reports name when seen already holds it (with the path it was first seen at).
func (c *Check) Unique(seen map[string]string, name, sub, what string) {
	if prev, ok := seen[name]; ok {
		c.Add(sub, "%s %q repeats %s", what, name, prev)
		return
	}
	seen[name] = c.Path + sub
}

// Decode decodes raw strictly into v, for a section's Apply (its Check passed already).
func Decode(raw json.RawMessage, v any) error {
	if len(raw) == 0 {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

// Writer is a section's view of the apply's single transaction: it writes values, records the
// changes for the report and the listeners, and remembers what the document touched for prune.
type Writer struct {
	// Txn is the apply's transaction; a section may write derived data (indexes) through it.
	Txn *store.Txn
	// Org and Project name where the section being applied sits (empty during Prune).
	Org, Project string
	// Now is the apply's time in apitime.Layout.
	Now string
	a   *applier
	// keyScope names both org and project in changes (API keys belong to both).
	keyScope bool
}

// In returns a writer for the same transaction scoped to org and project (for Prune).
func (w *Writer) In(org, project string) *Writer {
	c := *w
	c.Org, c.Project = org, project
	return &c
}

// change builds the Change of an entity of kind named name in the writer's scope.
func (w *Writer) change(op, kind, name string, old, nv []byte) journal.Change {
	c := journal.Change{Op: op, Kind: kind, Project: w.Project, Name: name, Old: old, New: nv}
	if w.Project == "" || w.keyScope {
		c.Org = w.Org
	}
	return c
}

// Put writes v (as JSON) at k when it differs from what is stored, and records the change of the
// entity of kind named name. k counts as touched either way.
func (w *Writer) Put(k []byte, kind, name string, v any) error {
	_, err := w.PutChanged(k, kind, name, v)
	return err
}

// PutChanged is Put that also reports whether the value changed (so a section writes what it
// derives from the entry only then).
func (w *Writer) PutChanged(k []byte, kind, name string, v any) (bool, error) {
	w.Touch(k)
	nv, err := json.Marshal(v)
	if err != nil {
		return false, err
	}
	old, err := w.Txn.Get(k)
	switch {
	case errors.Is(err, store.ErrNotFound):
		old = nil
	case err != nil:
		return false, err
	case bytes.Equal(old, nv):
		w.a.report.Unchanged++
		return false, nil
	}
	if err := w.Txn.Set(k, nv); err != nil {
		return false, err
	}
	op := "updated"
	if old == nil {
		op = "created"
		w.a.report.Created++
	} else {
		w.a.report.Updated++
	}
	w.a.report.Changes = append(w.a.report.Changes, w.change(op, kind, name, old, nv))
	return true, nil
}

// Delete removes k, when present, and records the deletion of the entity of kind named name.
func (w *Writer) Delete(k []byte, kind, name string) error {
	old, err := w.Txn.Get(k)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if err := w.Txn.Delete(k); err != nil {
		return err
	}
	w.a.report.Deleted++
	w.a.report.Changes = append(w.a.report.Changes, w.change("deleted", kind, name, old, nil))
	return nil
}

// ShowOnce puts a secret the section generated for the entity of kind named name (in the
// writer's scope) in the apply's report, the one place it is shown.
func (w *Writer) ShowOnce(kind, name, value string) {
	w.a.report.Secrets = append(w.a.report.Secrets, GeneratedSecret{Org: w.Org, Project: w.Project, Kind: kind, Name: name, Value: value})
}

// Touch marks k as mentioned by the document, so prune keeps it.
func (w *Writer) Touch(k []byte) { w.a.touched[string(k)] = true }

// Unchanged counts an entity the document restates without change.
func (w *Writer) Unchanged() { w.a.report.Unchanged++ }

// Untouched calls fn with every entry below p that the document did not touch, in key order
// (key and value are copies fn may keep).
func (w *Writer) Untouched(p []byte, fn func(k, v []byte) error) error {
	var keys, vals [][]byte
	err := w.Txn.Iterate(store.IterOptions{Prefix: p}, func(k, v []byte) (bool, error) {
		if !w.a.touched[string(k)] {
			keys = append(keys, bytes.Clone(k))
			vals = append(vals, bytes.Clone(v))
		}
		return true, nil
	})
	if err != nil {
		return err
	}
	for i, k := range keys {
		if err := fn(k, vals[i]); err != nil {
			return err
		}
	}
	return nil
}

// Prune deletes the entries below p that the document did not touch, recording a change of kind
// for each. Their keys continue "<project>/<name>" (ProjectLevel) or "<org>/<name>" (OrgLevel),
// where name may hold further "/" parts. keep (may be nil) spares an entry by its value; gone
// (may be nil) runs after each deletion, in the same transaction, for the section's derived data.
func (w *Writer) Prune(p []byte, kind string, level Level, keep func(v []byte) bool, gone func(scope, name string, old []byte) error) error {
	return w.Untouched(p, func(k, v []byte) error {
		if keep != nil && keep(v) {
			return nil
		}
		scope, name, _ := strings.Cut(string(k[len(p):]), string(store.Sep))
		sw := w.In("", scope)
		if level == OrgLevel {
			sw = w.In(scope, "")
		}
		if err := sw.Delete(k, kind, name); err != nil {
			return err
		}
		if gone != nil {
			return gone(scope, name, v)
		}
		return nil
	})
}

// Owner is a product that owns sections of the tenants document and follows their changes: the
// one way a product is joined to tenancy (Service.Add).
type Owner interface {
	// Sections are the document keys the product owns.
	Sections() []Section
	// Changed runs after every committed change (the product's caches drop what is stale).
	Changed(ctx context.Context, changes []journal.Change)
}
