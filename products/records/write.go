package records

import (
	"context"
	"regexp"
	"strconv"

	"github.com/gatehouse-dev/gatehouse/edge/store"
	"github.com/gatehouse-dev/gatehouse/index/fields"
)

// recordIDRe is the record id rule of the tenants document (recordIDRule in words).
var recordIDRe = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$`)

const recordIDRule = "1-128 letters, digits, ., - or _, starting with a letter or digit"

// WriteRecord is one record of an admin write or an import line.
type WriteRecord struct {
	// ID is generated (time-ordered) when empty.
	ID string `json:"id"`
	// Published defaults to true.
	Published *bool          `json:"published"`
	Data      map[string]any `json:"data"`
	// CreatedAt (RFC 3339) overrides the creation time of a new record (imports of old data).
	CreatedAt string `json:"createdAt,omitempty"`
}

// txWriter writes records, their index entries, counters and title journal in one transaction.
type txWriter struct {
	txn *store.Txn
	// deltas holds count changes by counter stripe key (counters.go).
	deltas map[string]int64
	// keys are the record keys written, for cache invalidation after the commit.
	keys []string
	// read holds the records this writer read or wrote by key (nil: none stored), so a write
	// that looks at the stored version first does not read it twice.
	read map[string]*record
	// colls are the collections written (project, collection), whose versions flush
	// writes (cache.go).
	colls map[[2]string]struct{}
	// stripe is the counter stripe this writer's Service writes (counters.go).
	stripe int
	// noVersions skips the collection versions: only the read cache of a shared store reads
	// them (cache.go), so a store no other node writes does not pay a key per write for them.
	noVersions bool
}

func newTxWriter(txn *store.Txn, stripe int) *txWriter {
	return &txWriter{txn: txn, stripe: stripe, deltas: map[string]int64{}, read: map[string]*record{}, colls: map[[2]string]struct{}{}}
}

// txWriter returns a writer of s's stripe; it writes collection versions on a shared store only.
func (s *Service) txWriter(txn *store.Txn) *txWriter {
	w := newTxWriter(txn, s.writeStripe())
	w.noVersions = !s.shared
	return w
}

// get returns the stored record (nil when missing) as this transaction sees it.
func (w *txWriter) get(project, coll, id string) (*record, error) {
	k := string(recKey(project, coll, id))
	if r, ok := w.read[k]; ok {
		return r, nil
	}
	r, err := getRecord(w.txn, project, coll, id)
	if err == nil {
		w.read[k] = r
	}
	return r, err
}

// index adds (or removes) the field index entries of r, and its compound entries under sch (none
// when sch is nil: a collection that no longer exists, whose entries are dropped with it).
func (w *txWriter) index(project, coll string, sch *Schema, r *record, add bool) error {
	if sch != nil {
		for _, e := range compoundKeys(sch, r) {
			var err error
			if add {
				err = w.txn.Set(e.key, e.val)
			} else {
				err = w.txn.Delete(e.key)
			}
			if err != nil {
				return err
			}
		}
	}
	d := int64(1)
	if !add {
		d = -1
	}
	stripe := w.stripe
	for _, x := range r.idx {
		p := idxPrefix(project, coll, x.name)
		var err error
		if add {
			err = fields.Put(w.txn, p, x.encs, r.id)
		} else {
			err = fields.Remove(w.txn, p, x.encs, r.id)
		}
		if err != nil {
			return err
		}
		if x.group {
			gp := groupPrefix(project, coll, x.name)
			for _, e := range x.encs {
				if e[0] == fields.TagNull {
					continue
				}
				w.deltas[string(stripeKey(stripe, append(gp, e...)))] += d
			}
		}
	}
	w.deltas[string(stripeKey(stripe, countKey(project, coll)))] += d
	return nil
}

// journal records in the title journal that the record id changed; prev is the version stored
// before (nil when none), cur the version written (nil when deleted).
func (w *txWriter) journal(project, coll, id string, prev, cur *record) error {
	if !w.noVersions {
		w.colls[[2]string{project, coll}] = struct{}{}
	}
	return w.txn.Set(append(journalPrefix(), store.NewID()...), journalEntry(project, coll, id, prev, cur))
}

// put stores rec, built under sch (replacing any previous version), and returns the previous
// one (nil when new).
func (w *txWriter) put(project, coll string, sch *Schema, rec *record) (*record, error) {
	old, err := w.get(project, coll, rec.id)
	if err != nil {
		return nil, err
	}
	if old != nil && old.published {
		if err := w.index(project, coll, sch, old, false); err != nil {
			return nil, err
		}
	}
	k := recKey(project, coll, rec.id)
	w.keys = append(w.keys, string(k))
	if err := w.txn.Set(k, encodeRecord(rec)); err != nil {
		return nil, err
	}
	w.read[string(k)] = rec
	if rec.published {
		if err := w.index(project, coll, sch, rec, true); err != nil {
			return nil, err
		}
	}
	return old, w.journal(project, coll, rec.id, old, rec)
}

// del removes a record of a collection with schema sch (nil when the collection is gone); it
// reports whether there was one.
func (w *txWriter) del(project, coll string, sch *Schema, id string) (bool, error) {
	old, err := w.get(project, coll, id)
	if err != nil || old == nil {
		return false, err
	}
	if old.published {
		if err := w.index(project, coll, sch, old, false); err != nil {
			return false, err
		}
	}
	w.keys = append(w.keys, string(recKey(project, coll, id)))
	if err := w.txn.Delete(recKey(project, coll, id)); err != nil {
		return false, err
	}
	w.read[string(recKey(project, coll, id))] = nil
	return true, w.journal(project, coll, id, old, nil)
}

// flush writes the counter changes and the versions of the collections written.
func (w *txWriter) flush() error {
	for c := range w.colls {
		if err := bumpVersion(w.txn, w.stripe, c[0], c[1]); err != nil {
			return err
		}
	}
	for k, d := range w.deltas {
		if d == 0 {
			continue
		}
		if err := addPart(w.txn, []byte(k), d); err != nil {
			return err
		}
	}
	return nil
}

// validate checks a write against the schema and builds the stored record.
func (s *Service) validate(sch *Schema, in WriteRecord) (*record, []problem) {
	var probs []problem
	if in.ID == "" {
		in.ID = store.NewID()
	} else if !recordIDRe.MatchString(in.ID) {
		probs = append(probs, problem{"id", "must be " + recordIDRule})
	}
	for name, v := range in.Data {
		f := sch.userField(name)
		if f == nil {
			probs = append(probs, problem{"data." + name, "no field " + strconv.Quote(name) + " in collection " + sch.Name})
			continue
		}
		if msg := CheckValue(f.Def, v); msg != "" {
			probs = append(probs, problem{"data." + name, msg})
			continue
		}
		if f.Type == "date" && v != nil {
			if _, ok := parseDate(v.(string)); !ok {
				probs = append(probs, problem{"data." + name, "date field needs RFC 3339 or YYYY-MM-DD"})
			}
		}
	}
	for _, f := range sch.Fields {
		if f.Def.Required && in.Data[f.Name] == nil {
			probs = append(probs, problem{"data." + f.Name, "is required"})
		}
	}
	now := s.now()
	created := now
	if in.CreatedAt != "" {
		t, ok := parseDate(in.CreatedAt)
		if !ok {
			probs = append(probs, problem{"createdAt", "must be RFC 3339"})
		}
		created = t
	}
	if len(probs) > 0 {
		return nil, probs
	}
	pub := in.Published == nil || *in.Published
	return buildRecord(sch, in.ID, pub, in.Data, created, now), nil
}

type problem struct{ field, msg string }

// adminJSON is the admin view of a record: the secret projection plus its published flag.
func adminJSON(r *record) []byte {
	sec := r.json(true)
	b := append([]byte{}, sec[:len(sec)-1]...)
	return append(b, `,"published":`+strconv.FormatBool(r.published)+"}"...)
}

// Put creates or replaces one record; created reports a new id. A replaced record keeps its
// createdAt unless the write gives one.
func (s *Service) Put(ctx context.Context, project, coll string, in WriteRecord) (out []byte, created bool, err error) {
	sch, err := s.Schema(ctx, project, coll)
	if err != nil {
		return nil, false, err
	}
	rec, probs := s.validate(sch, in)
	if probs != nil {
		return nil, false, validationOf(probs)
	}
	var keys []string
	defer func() { s.invalidate(keys) }()
	err = s.db.Update(ctx, func(txn *store.Txn) error {
		w := s.txWriter(txn)
		defer func() { keys = w.keys }()
		if in.ID == "" {
			// validate made the id (store.NewID: time-ordered and random, never made twice):
			// no stored record has it, which a read would confirm at the cost of a lookup in
			// every level of the store, on the committer's one goroutine.
			w.read[string(recKey(project, coll, rec.id))] = nil
		}
		if in.CreatedAt == "" {
			if old, err := w.get(project, coll, rec.id); err != nil {
				return err
			} else if old != nil {
				c, _ := old.times()
				_, u := rec.times()
				rec = buildRecord(sch, rec.id, rec.published, in.Data, c, u)
			}
		}
		old, err := w.put(project, coll, sch, rec)
		if err != nil {
			return err
		}
		created = old == nil
		return w.flush()
	})
	if err != nil {
		return nil, false, err
	}
	s.kickTitles()
	return adminJSON(rec), created, nil
}

// Delete removes a record, or answers ErrRecordNotFound.
func (s *Service) Delete(ctx context.Context, project, coll, id string) error {
	sch, err := s.Schema(ctx, project, coll)
	if err != nil {
		return err
	}
	var found bool
	defer s.invalidate([]string{string(recKey(project, coll, id))})
	err = s.db.Update(ctx, func(txn *store.Txn) error {
		w := s.txWriter(txn)
		var err error
		if found, err = w.del(project, coll, sch, id); err != nil {
			return err
		}
		return w.flush()
	})
	if err != nil {
		return err
	}
	if !found {
		return ErrRecordNotFound
	}
	s.kickTitles()
	return nil
}

// SetPublished publishes or unpublishes a record.
func (s *Service) SetPublished(ctx context.Context, project, coll, id string, published bool) ([]byte, error) {
	sch, err := s.Schema(ctx, project, coll)
	if err != nil {
		return nil, err
	}
	var rec *record
	defer s.invalidate([]string{string(recKey(project, coll, id))})
	err = s.db.Update(ctx, func(txn *store.Txn) error {
		w := s.txWriter(txn)
		old, err := w.get(project, coll, id)
		if err != nil {
			return err
		}
		if old == nil {
			return ErrRecordNotFound
		}
		c, _ := old.times()
		u := s.now()
		if old.published == published {
			_, u = old.times()
		}
		rec = buildRecord(sch, id, published, old.data(), c, u)
		if _, err := w.put(project, coll, sch, rec); err != nil {
			return err
		}
		return w.flush()
	})
	if err != nil {
		return nil, err
	}
	s.kickTitles()
	return adminJSON(rec), nil
}

func validationOf(probs []problem) error {
	e := validation(probs[0].field, probs[0].msg)
	return withProblems(e, probs)
}
