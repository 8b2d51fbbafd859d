package records

import (
	"context"
	"errors"
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

// indexWrites is what a published version of a record stores beside the record: its field
// index and compound entries, and the counters it counts in (their keys without the stripe,
// which the writer adds: counters.go).
type indexWrites struct {
	entries []fields.KV
	counts  [][]byte
}

// indexOf returns the index writes of r under sch (no compound entries when sch is nil: a
// collection that no longer exists, whose entries are dropped with it).
func indexOf(project, coll string, sch *Schema, r *record) indexWrites {
	var iw indexWrites
	keys := &fields.Keys{}
	if sch != nil {
		iw.entries = compoundKeys(keys, sch, r)
	}
	for _, x := range r.idx {
		iw.entries = keys.Entries(iw.entries, idxPrefixOf(project, coll, sch, x.name), x.encs, r.id)
	}
	iw.counts = countsOf(keys, project, coll, sch, r)
	return iw
}

// countsOf returns the counters r counts in under sch (nil when gone): the groups of its
// groupable values and the collection's count; keys (nil for none) holds the group keys.
func countsOf(keys *fields.Keys, project, coll string, sch *Schema, r *record) [][]byte {
	var out [][]byte
	for _, x := range r.idx {
		if !x.group {
			continue
		}
		gp := groupPrefixOf(project, coll, sch, x.name)
		for _, e := range x.encs {
			if e[0] != fields.TagNull {
				out = append(out, keys.Sub(gp, e))
			}
		}
	}
	if sch.is(project, coll) {
		return append(out, sch.countKey)
	}
	return append(out, countKey(project, coll))
}

// add writes the index writes of a version and counts it in.
func (w *txWriter) add(iw indexWrites) error {
	for _, e := range iw.entries {
		if err := w.txn.Set(e.Key, e.Val); err != nil {
			return err
		}
	}
	w.count(iw.counts, 1)
	return nil
}

// remove deletes the index entries of the stored version r under sch (as indexOf) and counts
// it out; fields.Remove also deletes what versions before key forms wrote for long strings.
func (w *txWriter) remove(project, coll string, sch *Schema, r *record) error {
	if sch != nil {
		for _, e := range compoundKeys(nil, sch, r) {
			if err := w.txn.Delete(e.Key); err != nil {
				return err
			}
		}
	}
	for _, x := range r.idx {
		if err := fields.Remove(w.txn, idxPrefixOf(project, coll, sch, x.name), x.encs, r.id); err != nil {
			return err
		}
	}
	w.count(countsOf(nil, project, coll, sch, r), -1)
	return nil
}

// count adds d to the counters keys in this writer's stripe.
func (w *txWriter) count(keys [][]byte, d int64) {
	for _, k := range keys {
		w.deltas[string(stripeKey(w.stripe, k))] += d
	}
}

// journal records in the title journal that the record id changed; prev is the version stored
// before (nil when none), cur the version written (nil when deleted).
func (w *txWriter) journal(project, coll, id string, prev, cur *record) error {
	return w.addJournal(project, coll, journalEntry(project, coll, id, prev, cur))
}

// addJournal adds an encoded entry (journalEntry) of a record of collection coll to the title
// journal.
func (w *txWriter) addJournal(project, coll string, entry []byte) error {
	if !w.noVersions {
		w.colls[[2]string{project, coll}] = struct{}{}
	}
	return w.txn.Journal(journalPrefix(), entry)
}

// prepared is a version of a record ready to be stored: its key and encoding, its index writes
// when published, and the journal entry of its write when no version was stored before. Put
// prepares the version before queueing its write, so that the committer's one goroutine,
// which every write of the store waits for, mostly copies it into the transaction.
type prepared struct {
	rec      *record
	key, val []byte
	index    indexWrites
	first    []byte
}

// prepare prepares rec, a version of a record of collection coll with schema sch.
func prepare(project, coll string, sch *Schema, rec *record) *prepared {
	p := &prepared{rec: rec, key: recKey(project, coll, rec.id), val: encodeRecord(rec),
		first: journalEntry(project, coll, rec.id, nil, rec)}
	if rec.published {
		p.index = indexOf(project, coll, sch, rec)
	}
	return p
}

// put stores rec, built under sch (replacing any previous version), and returns the previous
// one (nil when new).
func (w *txWriter) put(project, coll string, sch *Schema, rec *record) (*record, error) {
	return w.store(project, coll, sch, prepare(project, coll, sch, rec))
}

// derived reports whether a write of record id of collection coll keeps the record's index
// entries and counts: not while a rebuild of the collection has yet to reach the record (it
// indexes and counts the version it finds stored then: rebuildCollection).
func (w *txWriter) derived(project, coll, id string) (bool, error) {
	v, err := w.txn.GetHot(rebuildKey(project, coll))
	switch {
	case errors.Is(err, store.ErrNotFound):
		return true, nil
	case err != nil:
		return false, err
	}
	return id <= string(v), nil
}

// store stores the prepared version p of a record under sch (replacing any previous version)
// and returns the previous one (nil when new).
func (w *txWriter) store(project, coll string, sch *Schema, p *prepared) (*record, error) {
	old, err := w.get(project, coll, p.rec.id)
	if err != nil {
		return nil, err
	}
	derived, err := w.derived(project, coll, p.rec.id)
	if err != nil {
		return nil, err
	}
	if old != nil && old.published && derived {
		if err := w.remove(project, coll, sch, old); err != nil {
			return nil, err
		}
	}
	w.keys = append(w.keys, string(p.key))
	if err := w.txn.Set(p.key, p.val); err != nil {
		return nil, err
	}
	w.read[string(p.key)] = p.rec
	if p.rec.published && derived {
		if err := w.add(p.index); err != nil {
			return nil, err
		}
	}
	if old != nil {
		return old, w.journal(project, coll, p.rec.id, old, p.rec)
	}
	return nil, w.addJournal(project, coll, p.first)
}

// del removes a record of a collection with schema sch (nil when the collection is gone); it
// reports whether there was one.
func (w *txWriter) del(project, coll string, sch *Schema, id string) (bool, error) {
	old, err := w.get(project, coll, id)
	if err != nil || old == nil {
		return false, err
	}
	derived, err := w.derived(project, coll, id)
	if err != nil {
		return false, err
	}
	if old.published && derived {
		if err := w.remove(project, coll, sch, old); err != nil {
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
	p := prepare(project, coll, sch, rec)
	err = s.db.Update(ctx, func(txn *store.Txn) error {
		w := s.txWriter(txn)
		defer func() { keys = w.keys }()
		if in.ID == "" {
			// validate made the id (store.NewID: time-ordered and random, never made twice):
			// no stored record has it, which a read would confirm at the cost of a lookup in
			// every level of the store, on the committer's one goroutine.
			w.read[string(p.key)] = nil
		}
		if in.CreatedAt == "" {
			if old, err := w.get(project, coll, rec.id); err != nil {
				return err
			} else if old != nil {
				c, _ := old.times()
				_, u := rec.times()
				rec = buildRecord(sch, rec.id, rec.published, in.Data, c, u)
				p = prepare(project, coll, sch, rec)
			}
		}
		old, err := w.store(project, coll, sch, p)
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
