package tenancy

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/gatehouse-dev/gatehouse/edge/auth"
	"github.com/gatehouse-dev/gatehouse/edge/store"
)

// Change is one entity an apply created, updated or deleted.
type Change struct {
	Op   string `json:"op"`   // created | updated | deleted
	Kind string `json:"kind"` // org, project, key, form, template, connection, collection, record, plugin, suppression
	// Path names the entity: "acme", "demo/contact", "demo/posts/post-1".
	Path string `json:"path"`
	// Old and New are the stored JSON before and after (nil when absent); keys carry no values.
	Old json.RawMessage `json:"-"`
	New json.RawMessage `json:"-"`
}

// GeneratedKey is a key value the apply generated: shown once, never stored in clear.
type GeneratedKey struct {
	Org     string `json:"org"`
	Project string `json:"project,omitempty"`
	Name    string `json:"name"`
	Value   string `json:"value"`
}

// Report says what an apply changed.
type Report struct {
	Changed   bool           `json:"changed"`
	Created   int            `json:"created"`
	Updated   int            `json:"updated"`
	Deleted   int            `json:"deleted"`
	Unchanged int            `json:"unchanged"`
	Changes   []Change       `json:"changes"`
	Generated []GeneratedKey `json:"generatedKeys,omitempty"`
	// GeneratedSecrets are webhook secrets generated for webhooks without one: shown once.
	GeneratedSecrets []GeneratedSecret `json:"generatedWebhookSecrets,omitempty"`
}

// TxHook lets a product derive its own data from an apply's changes inside the same
// transaction (for example secondary indexes of records). An error aborts the whole apply.
type TxHook func(txn *store.Txn, changes []Change) error

// ErrKeyTaken reports a key value that another key (of another name or org) already has.
var ErrKeyTaken = errors.New("tenancy: key value already belongs to another key")

type applier struct {
	txn     *store.Txn
	nowTime time.Time
	now     string
	report  *Report
	touched map[string]bool
}

// Apply validates doc and writes it in one transaction: upserts by slug/name/id, deletes only
// with doc.Prune. Applying the same document twice reports no change the second time.
func (s *Service) Apply(ctx context.Context, doc *Document) (*Report, error) {
	if err := doc.Validate(); err != nil {
		return nil, err
	}
	if err := s.checkPlugins(ctx, doc); err != nil {
		return nil, err
	}
	s.applyMu.Lock()
	defer s.applyMu.Unlock()
	var rep *Report
	err := s.db.Update(ctx, func(txn *store.Txn) error {
		rep = &Report{Changes: []Change{}}
		now := s.now()
		a := &applier{txn: txn, nowTime: now, now: now.UTC().Format(TimeFormat), report: rep, touched: map[string]bool{}}
		if err := a.document(doc); err != nil {
			return err
		}
		if doc.Prune {
			if err := a.prune(); err != nil {
				return err
			}
		}
		for _, h := range s.hooks {
			if err := h(txn, rep.Changes); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	rep.Changed = rep.Created+rep.Updated+rep.Deleted > 0
	if rep.Changed {
		s.changed(ctx, rep.Changes)
	}
	return rep, nil
}

// TimeFormat is RFC 3339 UTC with milliseconds, the interface's timestamp form.
const TimeFormat = "2006-01-02T15:04:05.000Z07:00"

// put writes v at k when its JSON differs from what is stored, and records the change.
func (a *applier) put(k []byte, kind, path string, v any) error {
	a.touched[string(k)] = true
	nv, err := json.Marshal(v)
	if err != nil {
		return err
	}
	old, err := a.txn.Get(k)
	switch {
	case errors.Is(err, store.ErrNotFound):
		old = nil
	case err != nil:
		return err
	case bytes.Equal(old, nv):
		a.report.Unchanged++
		return nil
	}
	if err := a.txn.Set(k, nv); err != nil {
		return err
	}
	op := "updated"
	if old == nil {
		op = "created"
		a.report.Created++
	} else {
		a.report.Updated++
	}
	a.report.Changes = append(a.report.Changes, Change{Op: op, Kind: kind, Path: path, Old: old, New: nv})
	return nil
}

func (a *applier) document(doc *Document) error {
	for _, o := range doc.Orgs {
		if err := a.put(key(kOrg, o.Slug), "org", o.Slug, OrgInfo{Slug: o.Slug, Name: o.Name}); err != nil {
			return err
		}
		for _, k := range o.Keys {
			if err := a.key(o.Slug, "", k); err != nil {
				return err
			}
		}
		for _, addr := range o.Suppressions {
			if err := a.suppression(o.Slug, addr); err != nil {
				return err
			}
		}
		for _, p := range o.Projects {
			if err := a.project(o.Slug, p); err != nil {
				return err
			}
		}
	}
	return nil
}

func (a *applier) suppression(org, addr string) error {
	lower := strings.ToLower(strings.TrimSpace(addr))
	k := key(kSuppress, org, lower)
	a.touched[string(k)] = true
	if ok, err := a.txn.Has(k); err != nil || ok {
		if ok {
			a.report.Unchanged++
		}
		return err
	}
	return a.put(k, "suppression", org+"/"+lower, Suppression{Email: lower, Source: "tenants", At: a.now})
}

func (a *applier) project(org string, p Project) error {
	info := ProjectInfo{ID: p.ID, Org: org, Name: p.Name, Captcha: p.Captcha}
	if p.Email != nil && (p.Email.From != nil || p.Email.ReplyTo != nil) {
		info.Email = &EmailDefaults{From: p.Email.From, ReplyTo: p.Email.ReplyTo}
	}
	if raw, err := a.txn.Get(key(kProject, p.ID)); err == nil {
		var prev ProjectInfo
		if json.Unmarshal(raw, &prev) == nil && prev.Org != org {
			return &InvalidError{Problems: []Problem{{Path: "project " + p.ID, Message: "id already belongs to org " + prev.Org}}}
		}
	}
	if err := a.put(key(kProject, p.ID), "project", p.ID, info); err != nil {
		return err
	}
	for _, k := range p.Keys {
		if err := a.key(org, p.ID, k); err != nil {
			return err
		}
	}
	if p.Email != nil {
		for _, t := range p.Email.Templates {
			if err := a.put(key(kTemplate, p.ID, t.Slug), "template", p.ID+"/"+t.Slug, t); err != nil {
				return err
			}
		}
	}
	for _, f := range p.Forms {
		if f.Visibility == "" {
			f.Visibility = "public"
		}
		if err := a.put(key(kForm, p.ID, f.Slug), "form", p.ID+"/"+f.Slug, f); err != nil {
			return err
		}
	}
	if p.Membership != nil {
		for _, c := range p.Membership.Connections {
			if err := a.put(key(kConnection, p.ID, c.Name), "connection", p.ID+"/"+c.Name, c); err != nil {
				return err
			}
		}
	}
	for _, pl := range p.Plugins {
		if err := a.put(key(kPlugin, p.ID, pl.Name), "plugin", p.ID+"/"+pl.Name, pl); err != nil {
			return err
		}
	}
	if err := a.webhooks(p.ID, p.Webhooks); err != nil {
		return err
	}
	for _, col := range p.Collections {
		recs := col.Records
		col.Records = nil
		if err := a.put(key(kCollection, p.ID, col.Name), "collection", p.ID+"/"+col.Name, col); err != nil {
			return err
		}
		for _, r := range recs {
			if err := a.record(p.ID, col.Name, r); err != nil {
				return err
			}
		}
	}
	return nil
}

func (a *applier) record(project, coll string, r Record) error {
	k := key(kRecord, project, coll, r.ID)
	sr := StoredRecord{ID: r.ID, Published: r.Published, Data: r.Data, CreatedAt: a.now, UpdatedAt: a.now}
	if sr.Data == nil {
		sr.Data = map[string]any{}
	}
	if raw, err := a.txn.Get(k); err == nil {
		var prev StoredRecord
		if json.Unmarshal(raw, &prev) == nil {
			sr.CreatedAt = prev.CreatedAt
			// Same content: keep the stored UpdatedAt so the value (and the report) is unchanged.
			sameData, _ := json.Marshal(prev.Data)
			newData, _ := json.Marshal(sr.Data)
			if prev.Published == sr.Published && bytes.Equal(sameData, newData) {
				sr.UpdatedAt = prev.UpdatedAt
			}
		}
	}
	return a.put(k, "record", project+"/"+coll+"/"+r.ID, sr)
}

// key upserts one API key. A given value is stored by hash; a missing value keeps the existing
// key of that name or generates a new one, reported once.
func (a *applier) key(org, project string, k KeySpec) error {
	proj := project
	if proj == "" {
		proj = noProject
	}
	nameKey := key(kKeyName, org, proj, k.Name)
	a.touched[string(nameKey)] = true
	prevHash, err := a.txn.Get(nameKey)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return err
	}
	var hash string
	var kind auth.Kind
	var test bool
	switch {
	case k.Value != "":
		hash = auth.Hash(k.Value)
		kind, test, _ = auth.KindOf(k.Value)
	case prevHash != nil:
		hash = string(prevHash)
		raw, err := a.txn.Get(key(kKey, hash))
		if err != nil {
			return err
		}
		var prev auth.Key
		if err := json.Unmarshal(raw, &prev); err != nil {
			return err
		}
		kind, test = prev.Kind, prev.Test
	default:
		value, err := NewKeyValue(k.Kind)
		if err != nil {
			return err
		}
		hash = auth.Hash(value)
		kind, test, _ = auth.KindOf(value)
		a.report.Generated = append(a.report.Generated, GeneratedKey{Org: org, Project: project, Name: k.Name, Value: value})
	}
	// A value already held by another key is refused, never silently moved.
	if raw, err := a.txn.Get(key(kKey, hash)); err == nil {
		var other auth.Key
		if json.Unmarshal(raw, &other) == nil && (other.Org != org || other.Project != project || other.Name != k.Name) {
			return &InvalidError{Problems: []Problem{{Path: keyPath(org, project, k.Name), Message: "value already belongs to key " + keyPath(other.Org, other.Project, other.Name)}}}
		}
	}
	if prevHash != nil && string(prevHash) != hash {
		// Rotation: the old value stops working.
		if err := a.del(key(kKey, string(prevHash)), "key", keyPath(org, project, k.Name)); err != nil {
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
	rec := auth.Key{Hash: hash, Name: k.Name, Org: org, Project: project, Kind: kind, Test: test, Products: k.Products, Revoked: revoked}
	if err := a.put(key(kKey, hash), "key", keyPath(org, project, k.Name), rec); err != nil {
		return err
	}
	if string(prevHash) != hash {
		return a.txn.Set(nameKey, []byte(hash))
	}
	return nil
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
	var prev auth.Key
	if err := json.Unmarshal(raw, &prev); err != nil {
		return false, err
	}
	return prev.Revoked, nil
}

func keyPath(org, project, name string) string {
	if project == "" {
		return org + "/" + name
	}
	return org + "/" + project + "/" + name
}

// del removes k and records the deletion.
func (a *applier) del(k []byte, kind, path string) error {
	old, err := a.txn.Get(k)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if err := a.txn.Delete(k); err != nil {
		return err
	}
	a.report.Deleted++
	a.report.Changes = append(a.report.Changes, Change{Op: "deleted", Kind: kind, Path: path, Old: old})
	return nil
}

// prune deletes every document-managed entity the document did not mention. Suppressions
// added by bounces, complaints or the admin API are kept.
func (a *applier) prune() error {
	kinds := []string{kOrg, kProject, kKeyName, kForm, kTemplate, kConnection, kCollection, kRecord, kPlugin, kWebhook, kSuppress}
	for _, kind := range kinds {
		var doomed [][]byte
		var olds [][]byte
		err := a.txn.Iterate(store.IterOptions{Prefix: prefix(kind)}, func(k, v []byte) (bool, error) {
			if a.touched[string(k)] {
				return true, nil
			}
			if kind == kSuppress {
				var s Suppression
				if json.Unmarshal(v, &s) == nil && s.Source != "tenants" {
					return true, nil
				}
			}
			doomed = append(doomed, bytes.Clone(k))
			olds = append(olds, v)
			return true, nil
		})
		if err != nil {
			return err
		}
		for i, k := range doomed {
			path := strings.TrimPrefix(string(k), string(prefix(kind)))
			if kind == kKeyName {
				// The key record goes with its name entry.
				if err := a.del(key(kKey, string(olds[i])), "key", path); err != nil {
					return err
				}
				if err := a.txn.Delete(k); err != nil {
					return err
				}
				continue
			}
			if err := a.del(k, kind, path); err != nil {
				return err
			}
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
		return auth.PrefixLive + rnd, nil
	case "secret":
		return auth.PrefixSecret + rnd, nil
	case "test":
		return auth.PrefixTest + rnd, nil
	}
	return "", fmt.Errorf("tenancy: unknown key kind %q", kind)
}
