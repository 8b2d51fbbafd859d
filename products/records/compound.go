package records

import (
	"bytes"
	"context"
	"encoding/binary"
	"slices"
	"sort"
	"strings"

	"github.com/gatehouse-dev/gatehouse/edge/store"
	"github.com/gatehouse-dev/gatehouse/index/fields"
)

// Compound indexes answer "an equality filter on a select or boolean field, sorted by a number,
// date or createdAt" by walking only the entries of the filter's values, in sort order: for
// each such pair (lead L, order O) of a collection, every published record with a non-null L
// has the key
//
//	records/x/<p>/<c>/<L>/<O>/<enc L value><enc O value><id>   -> projection of the record
//
// written and removed in the transaction of the record's write, beside its field index
// entries. The value is the record's aggregate projection: the index encodings of its
// groupable fields other than L (encodeProjection), so that an aggregate whose filters and
// groupBy field are all among L, O and those fields is answered from one walk of entries,
// without reading records (eachCompound). Stores written before compound indexes existed get
// them once on start (the marker key records/v/compound says they are complete; records/v/
// aggproj that every entry carries its projection).

// compoundMarker is set once every stored record has its compound entries.
func compoundMarker() []byte { return store.Key(root, "v", "compound") }

// projMarker is set once every compound entry carries its record's projection.
func projMarker() []byte { return store.Key(root, "v", "aggproj") }

func compoundPrefix(project, coll, lead, order string) []byte {
	return store.Prefix(root, "x", project, coll, lead, order)
}

func compoundCollPrefix(project, coll string) []byte { return store.Prefix(root, "x", project, coll) }

// leadField reports whether f leads compound indexes: single-valued with few values.
func leadField(f *Field) bool { return f.Type == "select" || f.Type == "boolean" }

// orderField reports whether compound indexes order by f.
func orderField(f *Field) bool {
	return f.Name == fieldCreatedAt || (f.Type == "number" || f.Type == "date") && f.Name != fieldUpdatedAt
}

// compoundFields fills s.leads and s.orders from its fields, and s.leadOrderKeys.
func (s *Schema) compoundFields() {
	s.leads, s.orders, s.leadOrderKeys = nil, []string{fieldCreatedAt}, nil
	for _, f := range s.Fields {
		switch {
		case leadField(f):
			s.leads = append(s.leads, f.Name)
		case orderField(f):
			s.orders = append(s.orders, f.Name)
		}
	}
	for _, l := range s.leads {
		for _, o := range s.orders {
			s.leadOrderKeys = append(s.leadOrderKeys, slices.Clip(compoundPrefix(s.Project, s.Name, l, o)))
		}
	}
}

// hasCompound reports whether the schema keeps a compound index of lead and order.
func (s *Schema) hasCompound(lead, order string) bool {
	l, o := s.field(lead), s.field(order)
	return l != nil && o != nil && leadField(l) && orderField(o) && !l.Array
}

// compoundKeys returns the compound entries of a record under schema s (nil for none); keys
// (nil for none) holds their keys.
func compoundKeys(keys *fields.Keys, s *Schema, r *record) []fields.KV {
	var out []fields.KV
	for i, l := range s.leads {
		lv := r.values(l)
		if len(lv) != 1 || lv[0][0] == fields.TagNull {
			continue
		}
		proj := encodeProjection(r, l)
		for j, o := range s.orders {
			ov := r.values(o)
			enc := fields.Null()
			if len(ov) > 0 {
				enc = ov[0]
			}
			sub := keys.Sub(s.leadOrderKeys[i*len(s.orders)+j], lv[0])
			out = append(out, fields.KV{Key: keys.Entry(sub, enc, r.id), Val: proj})
		}
	}
	return out
}

// encodeProjection is the value of a record's compound entries under lead: the index
// encodings of its groupable fields except lead (whose value, like the order field's, is in
// the key), in the stored record's format: count, then per field its name, count and values.
// A field without a value (null, or an empty array) is left out: to every filter and groupBy
// a missing field and one whose only value is null are alike (Filter.match, aggregate), and
// a record is written once per order field, so the bytes add up. Entries written before
// carry such fields; both are read alike.
func encodeProjection(r *record, lead string) []byte {
	n, size := 0, 1
	for _, x := range r.idx {
		if projected(x, lead) {
			n++
			size += len(x.name) + 2
			for _, e := range x.encs {
				size += len(e) + 1
			}
		}
	}
	b := make([]byte, 0, size)
	b = binary.AppendUvarint(b, uint64(n))
	for _, x := range r.idx {
		if projected(x, lead) {
			b = putBytes(b, []byte(x.name))
			b = binary.AppendUvarint(b, uint64(len(x.encs)))
			for _, e := range x.encs {
				b = putBytes(b, e)
			}
		}
	}
	return b
}

// projected reports whether x is in a projection under lead: a groupable field other than
// lead with a value.
func projected(x idxVal, lead string) bool {
	return x.group && x.name != lead && len(x.encs) > 0 && !(len(x.encs) == 1 && x.encs[0][0] == fields.TagNull)
}

// decodeProjection appends the fields of a projection to idx; the values alias b.
func decodeProjection(b []byte, idx []idxVal) ([]idxVal, error) {
	rd := &reader{b: b}
	n := rd.uvarint()
	for i := 0; i < n && !rd.err; i++ {
		name := string(rd.bytes())
		idx = append(idx, idxVal{name: name, encs: rd.encodings(), group: true})
	}
	if rd.err {
		return nil, errCorrupt
	}
	return idx, nil
}

// buildCompound gives every stored published record its compound entries, with their
// projections, once: when a marker is missing (a store written before compound indexes, or
// before their projections), it walks each collection's records in chunks, writing each
// chunk's entries in the transaction that read the chunk (so a concurrent write conflicts and
// the chunk is redone instead of leaving a stale projection), then sets the markers. Entries
// are idempotent, so an interrupted build is simply repeated on the next start.
func (s *Service) buildCompound(ctx context.Context) error {
	done := false
	if err := s.db.View(ctx, func(txn *store.Txn) error {
		a, err := txn.Has(compoundMarker())
		if err != nil {
			return err
		}
		b, err := txn.Has(projMarker())
		done = a && b
		return err
	}); err != nil {
		return err
	}
	if !done {
		err := s.eachCollection(ctx, func(project string, c Collection) error {
			sch, err := s.Schema(ctx, project, c.Name)
			if err != nil || len(sch.leads) == 0 {
				return err
			}
			return s.buildCompoundOf(ctx, sch)
		})
		if err != nil {
			return err
		}
		err = s.db.Update(ctx, func(txn *store.Txn) error {
			if err := txn.Set(compoundMarker(), []byte{1}); err != nil {
				return err
			}
			return txn.Set(projMarker(), []byte{1})
		})
		if err != nil {
			return err
		}
		s.gen.Add(1) // what the read cache kept of compound entries predates the build
	}
	s.compoundReady.Store(true)
	s.projReady.Store(true)
	return nil
}

// buildCompoundOf writes the compound entries of one collection's published records.
func (s *Service) buildCompoundOf(ctx context.Context, sch *Schema) error {
	prefix := recPrefix(sch.Project, sch.Name)
	var after []byte
	for {
		var last []byte
		n := 0
		err := s.db.Update(ctx, func(txn *store.Txn) error {
			last, n = nil, 0
			var entries []fields.KV
			err := txn.Iterate(store.IterOptions{Prefix: prefix, Start: after}, func(k, v []byte) (bool, error) {
				if after != nil && bytes.Equal(k, after) {
					return true, nil
				}
				last = bytes.Clone(k)
				n++
				r, err := decodeRecord(store.LastPart(k), v)
				if err != nil {
					return false, err
				}
				if r.published {
					entries = append(entries, compoundKeys(nil, sch, r)...)
				}
				return n < 1000 && len(entries) < 10000, nil
			})
			if err != nil {
				return err
			}
			for _, e := range entries {
				if err := txn.Set(e.Key, e.Val); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil || n == 0 {
			return err
		}
		after = last
	}
}

// scanCompound is scanSorted over the compound index of p.lead and the single sort key: it
// walks the entries of each of the lead's values in sort order from the cursor (narrowed by a
// range filter on the sort key), checking each record, until want match. With several values
// (in), each walk stops once it passes the want-th best match of the walks before it, and the
// matches are merged. An entry that disagrees with its record (left by a write racing a schema
// change) is skipped: order and membership come from the record itself.
func (s *Service) scanCompound(ctx context.Context, rd *recReader, p *plan, want int, member map[string]struct{}) ([]*record, error) {
	k := p.sort[0]
	base := compoundPrefix(p.sch.Project, p.sch.Name, p.lead.Field, k.Field)
	o := fields.ScanOptions{Reverse: k.Desc, Range: p.walk}
	vals := distinctValues(p.lead.Values)
	recs := make([]*record, 0, want)
	var tuples []tuple // kept only to merge the walks of several values
	var bound *tuple
	for _, v := range vals {
		prefix := fields.Sub(base, v)
		o.After = nil
		if p.after != nil {
			o.After = fields.Entry(prefix, p.after.vals[0], p.after.id)
		}
		got := 0
		// The entries to check are queued (pr, with their sort values one after the other in
		// encs, each ending at encEnd[i]) and their records read a page at a time (getAll);
		// take checks them in walk order.
		pr := newPageReads(rd, p.sch.Project, p.sch.Name)
		encs := make([]byte, 0, 16*min(want, getBatch)) // a number's encoding is 9 bytes
		encEnd := make([]int, 0, min(want, getBatch))
		take := func() error {
			page, err := pr.flush()
			defer func() { encs, encEnd = encs[:0], encEnd[:0] }()
			if err != nil {
				return err
			}
			for i, r := range page {
				if r == nil || !p.match(r) {
					continue
				}
				if lv := r.values(p.lead.Field); len(lv) != 1 || !bytes.Equal(lv[0], v) {
					continue
				}
				enc := encs[:encEnd[i]]
				if i > 0 {
					enc = encs[encEnd[i-1]:encEnd[i]]
				}
				if sv := r.values(k.Field); len(sv) > 0 && !bytes.Equal(sv[0], enc) || len(sv) == 0 && enc[0] != fields.TagNull {
					continue
				}
				recs = append(recs, r)
				if len(vals) > 1 {
					tuples = append(tuples, p.tupleOf(r))
				}
				got++
			}
			return nil
		}
		err := fields.ScanBytes(rd.txn, prefix, o, func(enc, id []byte) (bool, error) {
			if bound != nil && entryAfter(enc, id, *bound, k.Desc) {
				return false, nil
			}
			if member != nil {
				if _, in := member[string(id)]; !in {
					return true, nil
				}
			}
			encs = append(encs, enc...)
			encEnd = append(encEnd, len(encs))
			if !pr.addBytes(id, want-got) {
				return ctx.Err() == nil, ctx.Err()
			}
			if err := take(); err != nil {
				return false, err
			}
			return got < want && ctx.Err() == nil, ctx.Err()
		})
		if err == nil {
			err = take() // the entries queued when the walk ended
		}
		if err != nil {
			return nil, err
		}
		if len(vals) > 1 && len(recs) >= want {
			recs = topK(p, recs, tuples, want)
			tuples = tuples[:0]
			for _, r := range recs {
				tuples = append(tuples, p.tupleOf(r))
			}
			bound = &tuples[len(tuples)-1]
		}
	}
	if len(vals) > 1 {
		return topK(p, recs, tuples, want), nil
	}
	return recs, nil
}

// entryAfter reports whether the entry (enc, id) comes after the tuple b in the walk's order.
func entryAfter(enc, id []byte, b tuple, desc bool) bool {
	c := bytes.Compare(enc, b.vals[0])
	if c == 0 {
		c = strings.Compare(string(id), b.id)
	}
	if desc {
		c = -c
	}
	return c > 0
}

// distinctValues returns vals without repeats, in byte order.
func distinctValues(vals [][]byte) [][]byte {
	out := make([][]byte, 0, len(vals))
	for _, v := range vals {
		dup := false
		for _, w := range out {
			dup = dup || bytes.Equal(v, w)
		}
		if !dup {
			out = append(out, v)
		}
	}
	sort.Slice(out, func(i, j int) bool { return bytes.Compare(out[i], out[j]) < 0 })
	return out
}
