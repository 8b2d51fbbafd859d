package records

import (
	"bytes"
	"context"
	"encoding/json"
	"sort"
	"strconv"

	"github.com/gatehouse-dev/gatehouse/index/fields"
)

// AggregateQuery is an aggregate request: a count, or groupBy, or distinct, narrowed by filter and q.
type AggregateQuery struct {
	Project, Collection string
	Secret              bool
	Filters             []string
	Q                   string
	GroupBy             string
	Distinct            string
}

// Aggregate answers {"total":N}, {"groups":{value:count}} or {"values":[...]} (ascending).
func (s *Service) Aggregate(ctx context.Context, q AggregateQuery) ([]byte, error) {
	sch, err := s.readable(ctx, q.Project, q.Collection, q.Secret)
	if err != nil {
		return nil, err
	}
	if q.GroupBy != "" && q.Distinct != "" {
		return nil, validation("groupBy", "use groupBy or distinct, not both")
	}
	c, err := compile(sch, q.Secret, q.Filters, q.Q, "")
	if err != nil {
		return nil, err
	}
	if len(c.words) > 0 {
		if err := s.awaitTitles(ctx); err != nil {
			return nil, err
		}
	}
	name, param := q.GroupBy, "groupBy"
	if q.Distinct != "" {
		name, param = q.Distinct, "distinct"
	}
	var f *Field
	if name != "" {
		f = sch.field(name)
		if f == nil || !f.Indexed {
			return nil, validation(param, strconv.Quote(name)+" is not a field that can be grouped")
		}
		if f.Private && !q.Secret {
			return nil, privateField(name)
		}
	}
	plain := len(c.filters) == 0 && len(c.words) == 0
	counts := map[string]int{}
	var order [][]byte
	// add counts n for enc, which it copies when new (enc may be reused by the caller).
	add := func(enc []byte, n int) {
		if c, ok := counts[string(enc)]; ok {
			counts[string(enc)] = c + n
			return
		}
		enc = bytes.Clone(enc)
		order = append(order, enc)
		counts[string(enc)] = n
	}
	var total int64
	// A filtered aggregate on an unshared store reads through the collection's walk cache
	// (viewColl): its compound or index walks are kept for the next aggregates and lists.
	// Plain ones read counters or walk a whole index, which the cache does not keep.
	view := s.view
	if !plain && !s.shared {
		view = func(ctx context.Context, fn func(rd *recReader) error) error { return s.viewColl(ctx, sch, fn) }
	}
	err = view(ctx, func(rd *recReader) error {
		txn := rd.txn
		switch {
		case f == nil && plain:
			total, err = readCount(txn, q.Project, q.Collection)
			return err
		case f != nil && plain && f.Groupable():
			// Per-value counters kept on write.
			return eachCount(txn, groupPrefix(q.Project, q.Collection, f.Name), func(enc []byte, n int64) {
				add(enc, int(n))
			})
		case f != nil && plain:
			// Index walk, keys only: the index holds only published records.
			return fields.Scan(txn, idxPrefix(q.Project, q.Collection, f.Name), fields.ScanOptions{}, func(enc []byte, _ string) (bool, error) {
				if enc[0] != fields.TagNull {
					add(enc, 1)
				}
				return ctx.Err() == nil, ctx.Err()
			})
		}
		visit := func(r *record) {
			total++
			if f == nil {
				return
			}
			for _, enc := range r.values(f.Name) {
				if enc[0] != fields.TagNull {
					add(enc, 1)
				}
			}
		}
		st, err := s.readStats(rd, c, false)
		if err != nil {
			return err
		}
		return s.visit(ctx, rd, planVisit(c, st, f), visit)
	})
	if err != nil {
		return nil, err
	}
	switch {
	case f == nil:
		return json.Marshal(map[string]int64{"total": total})
	case q.GroupBy != "":
		groups := make(map[string]int, len(counts))
		for k, n := range counts {
			label := fields.Text([]byte(k))
			if f.Type == "date" {
				if v, err := fields.Decode([]byte(k)); err == nil {
					if ms, ok := v.(float64); ok {
						label = timeText(int64(ms))
					}
				}
			}
			groups[label] += n
		}
		return json.Marshal(map[string]any{"groups": groups})
	}
	sort.Slice(order, func(i, j int) bool { return bytes.Compare(order[i], order[j]) < 0 })
	values := make([]any, 0, len(order))
	for _, enc := range order {
		v, _ := fields.Decode(enc)
		if f.Type == "date" {
			if ms, ok := v.(float64); ok {
				v = timeText(int64(ms))
			}
		}
		values = append(values, v)
	}
	return json.Marshal(map[string]any{"values": values})
}

// eachCompound visits the records of a walkCompound plan from the compound entries alone: it
// walks the entries of each value of the lead, narrowed to the plan's range of its order
// field, and checks every filter on a record made of the entry alone (published, since only
// published records have entries): the walk visits only records with the lead's values and
// no record is read.
func (s *Service) eachCompound(ctx context.Context, rd *recReader, p *plan, fn func(r *record)) error {
	withID := false
	for _, n := range p.need {
		withID = withID || n == fieldID
	}
	// One record, rebuilt for each entry: fn gets it only for the duration of the call.
	r := &record{published: true}
	base := compoundPrefix(p.sch.Project, p.sch.Name, p.lead.Field, p.order)
	for _, v := range distinctValues(p.lead.Values) {
		prefix := fields.Sub(base, v)
		leadEnc := [][]byte{v}
		orderEnc := [][]byte{nil}
		err := fields.ScanValues(rd.txn, prefix, fields.ScanOptions{Range: p.walk}, func(enc, id, val []byte) (bool, error) {
			orderEnc[0] = enc
			r.idx = append(r.idx[:0], idxVal{name: p.lead.Field, encs: leadEnc}, idxVal{name: p.order, encs: orderEnc})
			var err error
			if r.idx, err = projectionFields(val, p.need, r.idx); err != nil {
				return false, err
			}
			if withID {
				r.id = string(id)
			}
			if p.match(r) {
				fn(r)
			}
			return ctx.Err() == nil, ctx.Err()
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// projectionFields appends to idx the fields of a projection (encodeProjection) named in need,
// reusing idx's spare capacity; names come from need and values alias b.
func projectionFields(b []byte, need []string, idx []idxVal) ([]idxVal, error) {
	rd := &reader{b: b}
	n := rd.uvarint()
	for i := 0; i < n && !rd.err; i++ {
		name := rd.bytes()
		m := rd.uvarint()
		if m > len(rd.b) {
			return nil, errCorrupt
		}
		want := ""
		for _, nm := range need {
			if nm == string(name) {
				want = nm
				break
			}
		}
		if want == "" {
			for j := 0; j < m && !rd.err; j++ {
				rd.bytes()
			}
			continue
		}
		var encs [][]byte
		if len(idx) < cap(idx) {
			encs = idx[:len(idx)+1][len(idx)].encs[:0]
		}
		for j := 0; j < m && !rd.err; j++ {
			encs = append(encs, rd.bytes())
		}
		idx = append(idx, idxVal{name: want, encs: encs, group: true})
	}
	if rd.err {
		return nil, errCorrupt
	}
	return idx, nil
}
