package records

import (
	"bytes"
	"encoding/binary"
	"strconv"
	"strings"

	"github.com/gatehouse-dev/gatehouse/edge/apierr"
	"github.com/gatehouse-dev/gatehouse/index/fields"
	"github.com/gatehouse-dev/gatehouse/index/title"
)

// criteria is what a query asks for, checked against the collection's schema: the filters,
// the title words of q and the sort order. It says nothing about how records are reached
// (that is the plan's job) and, like the plan, is never changed once compiled.
type criteria struct {
	sch     *Schema
	secret  bool
	filters []Filter
	words   []string
	sort    []SortKey
	// scope names the criteria in cursors: a cursor is valid only for the query that made it.
	scope string
	// drafts matches unpublished records too (the dashboard's list, never a public read).
	drafts bool
}

// access is how a plan reaches its records.
type access int

const (
	// byTitle reads the title index's matches in createdAt order (q, no filter, createdAt order).
	byTitle access = iota
	// ordered tries the candidate sets, else walks the index of the single sort key in order
	// (the compound index of the lead and the sort key when the plan has a lead).
	ordered
	// stream tries the candidate sets, else reads every record, keeping the best by several keys.
	stream
	// walkCompound visits, for an aggregate, the compound entries of the lead's values alone.
	walkCompound
	// intersect visits, for an aggregate, the intersection of the candidate sets, else every record.
	intersect
)

// source is a candidate id set of a plan: the records one filter's index ranges select.
type source struct {
	f      *Filter
	ranges []fields.Range
	// known is how many records the ranges select, from the per-value counters; -1 when unknown.
	known int64
}

// plan is a compiled query and the way the planner chose to answer it. Everything a scan
// decides while running (which candidate set is small enough, whether the ordered walk beats
// reading the candidates) is made from the plan's fields and local state: a plan is never
// changed after planning, so it can be printed (String) and compared in golden tests.
type plan struct {
	*criteria
	access access
	// limit is the page size (lists), after the cursor's position (nil: the first page).
	limit int
	after *tuple
	// total is the collection's record count as the planner of a list saw it (an estimate).
	total int64
	// sources are the filters with index ranges, in filter order; gather is the order in
	// which a list tries them as candidate sets (indexes into sources).
	sources []source
	gather  []int
	// lead is the eq or in filter whose compound index the walk uses (nil: the sort key's own
	// index); leadCount is how many records it selects.
	lead      *Filter
	leadCount int64
	// walk is the range of the walked field (the sort key, or an aggregate's compound order
	// field) that filters narrow the walk to; order is the compound order field of walkCompound.
	walk  fields.Range
	order string
	// need are the fields a compound walk reads from each entry's projection.
	need []string
}

// tuple is a record's position in the sort order: its sort values and id.
type tuple struct {
	vals [][]byte
	id   string
}

func (c *criteria) tupleOf(r *record) tuple {
	t := tuple{vals: make([][]byte, len(c.sort)), id: r.id}
	for i, k := range c.sort {
		if k.Field == fieldID {
			t.vals[i] = fields.String(r.id)
			continue
		}
		if v := r.values(k.Field); len(v) > 0 {
			t.vals[i] = v[0]
		} else {
			t.vals[i] = fields.Null()
		}
	}
	return t
}

// compare orders tuples by the sort keys; ties are broken by id in the first key's direction.
func (c *criteria) compare(a, b tuple) int {
	for i, k := range c.sort {
		r := bytes.Compare(a.vals[i], b.vals[i])
		if k.Desc {
			r = -r
		}
		if r != 0 {
			return r
		}
	}
	r := strings.Compare(a.id, b.id)
	if c.sort[0].Desc {
		r = -r
	}
	return r
}

// candidate reports whether r (nil for a missing record) is a result of the query that sorts
// after the cursor, and returns its sort tuple.
func (p *plan) candidate(r *record) (tuple, bool) {
	if r == nil || !p.match(r) {
		return tuple{}, false
	}
	t := p.tupleOf(r)
	if p.after != nil && p.compare(t, *p.after) <= 0 {
		return tuple{}, false
	}
	return t, true
}

// keep appends to recs and tuples the records of page that are candidates, with their tuples.
func (p *plan) keep(page []*record, recs []*record, tuples []tuple) ([]*record, []tuple) {
	for _, r := range page {
		if t, ok := p.candidate(r); ok {
			recs, tuples = append(recs, r), append(tuples, t)
		}
	}
	return recs, tuples
}

// match reports whether a stored record is a published result of the query (or an
// unpublished one, when the criteria take drafts).
func (c *criteria) match(r *record) bool {
	if !r.published && !c.drafts {
		return false
	}
	for i := range c.filters {
		if !c.filters[i].match(r) {
			return false
		}
	}
	if len(c.words) > 0 {
		t := ""
		if v := r.values(fieldTitle); len(v) == 1 {
			if s, err := fields.Decode(v[0]); err == nil {
				t, _ = s.(string)
			}
		}
		if !title.Matches(c.words, t) {
			return false
		}
	}
	return true
}

func encodeCursor(t tuple) []byte {
	b := []byte{1}
	b = binary.AppendUvarint(b, uint64(len(t.vals)))
	for _, v := range t.vals {
		b = putBytes(b, cursorValue(v))
	}
	return append(b, t.id...)
}

// decodeCursor reads a cursor payload made by encodeCursor for a plan with n sort keys.
func decodeCursor(b []byte, n int) (tuple, error) {
	rd := &reader{b: b}
	if rd.byte1() != 1 || rd.uvarint() != n || rd.err {
		return tuple{}, apierr.ErrInvalidCursor
	}
	t := tuple{vals: make([][]byte, n)}
	for i := 0; i < n; i++ {
		v := rd.bytes()
		if rd.err {
			return tuple{}, apierr.ErrInvalidCursor
		}
		if !validCursorValue(v) {
			return tuple{}, apierr.ErrInvalidCursor
		}
		t.vals[i] = v
	}
	t.id = string(rd.b)
	if t.id == "" {
		return tuple{}, apierr.ErrInvalidCursor
	}
	return t, nil
}

// String prints the plan on one line, clauses separated by "; ":
//
//	scan compound(category) order views desc views>=3; candidates index(category)=500; filter category:eq:"news", views:gte:3
//
// The first clause is the access path, with the range the walk is narrowed to: for lists
// "title search order createdAt asc|desc", "scan index(F) asc|desc", "scan compound(L) order
// F asc|desc", "scan records by id asc|desc" or "scan records top by F asc, G desc" (several
// sort keys), then "candidates": the id sets a list tries before that walk, in the order it
// tries them. For aggregates "walk compound(L) order F", "intersect" and the id sets (walked
// smallest first), or "scan records". An id set is "title" (q) or "index(F)", with "=N" when
// the counters say it holds N records. Then the filters in canonical form, and q's words.
func (p *plan) String() string {
	var b strings.Builder
	switch p.access {
	case byTitle:
		b.WriteString("title search order createdAt " + direction(p.sort[0].Desc))
	case ordered:
		k := p.sort[0]
		switch {
		case k.Field == fieldID:
			b.WriteString("scan records by id " + direction(k.Desc))
		case p.lead != nil:
			b.WriteString("scan compound(" + p.lead.Field + ") order " + k.Field + " " + direction(k.Desc))
		default:
			b.WriteString("scan index(" + k.Field + ") " + direction(k.Desc))
		}
		if k.Field != fieldID {
			writeRange(&b, p.sch.field(k.Field), p.walk)
		}
	case stream:
		b.WriteString("scan records top by ")
		for i, k := range p.sort {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(k.Field + " " + direction(k.Desc))
		}
	case walkCompound:
		b.WriteString("walk compound(" + p.lead.Field + ") order " + p.order)
		writeRange(&b, p.sch.field(p.order), p.walk)
	}
	var sets []string
	if len(p.words) > 0 && (p.access == ordered || p.access == stream || p.access == intersect) {
		sets = append(sets, "title")
	}
	if p.access == intersect {
		for _, src := range p.sources {
			sets = append(sets, src.String())
		}
		if len(sets) == 0 {
			b.WriteString("scan records")
		} else {
			b.WriteString("intersect " + strings.Join(sets, " "))
		}
	} else {
		for _, i := range p.gather {
			sets = append(sets, p.sources[i].String())
		}
		if len(sets) > 0 {
			b.WriteString("; candidates " + strings.Join(sets, " "))
		}
	}
	if len(p.filters) > 0 {
		b.WriteString("; filter ")
		for i := range p.filters {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(p.filters[i].String())
		}
	}
	if len(p.words) > 0 {
		b.WriteString("; q " + strconv.Quote(strings.Join(p.words, " ")))
	}
	return b.String()
}

// String prints the source as index(F), with "=N" when its count is known.
func (src source) String() string {
	s := "index(" + src.f.Field + ")"
	if src.known >= 0 {
		s += "=" + strconv.FormatInt(src.known, 10)
	}
	return s
}

func direction(desc bool) string {
	if desc {
		return "desc"
	}
	return "asc"
}

// writeRange prints a range of f's encoded values, as " F>=a F<b" (nothing when open).
func writeRange(b *strings.Builder, f *Field, r fields.Range) {
	field := f.Name
	if r.Lo.Value != nil && r.Hi.Value != nil && r.Lo.Inclusive && r.Hi.Inclusive && bytes.Equal(r.Lo.Value, r.Hi.Value) {
		b.WriteString(" " + field + "=" + valueText(f, r.Lo.Value))
		return
	}
	// A one-byte bound is a type tag: the open end of that type's values.
	if len(r.Lo.Value) > 1 {
		op := ">"
		if r.Lo.Inclusive {
			op = ">="
		}
		b.WriteString(" " + field + op + valueText(f, r.Lo.Value))
	}
	if len(r.Hi.Value) > 1 {
		op := "<"
		if r.Hi.Inclusive {
			op = "<="
		}
		b.WriteString(" " + field + op + valueText(f, r.Hi.Value))
	}
}

// valueText prints an encoded value of f: strings quoted, dates as the API writes them,
// others as groupBy prints them.
func valueText(f *Field, enc []byte) string {
	v, err := fields.Decode(enc)
	if err != nil {
		return fields.Text(enc)
	}
	switch t := v.(type) {
	case string:
		return strconv.Quote(t)
	case float64:
		if f.Type == "date" {
			return timeText(int64(t))
		}
	}
	return fields.Text(enc)
}

// String prints the filter as field:op:values, values as valueText prints them.
func (f *Filter) String() string {
	s := f.Field + ":" + f.Op + ":"
	if f.Op == "exists" {
		return s + strconv.FormatBool(f.Exists)
	}
	for i, v := range f.Values {
		if i > 0 {
			s += ","
		}
		s += valueText(f.f, v)
	}
	return s
}
