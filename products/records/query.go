package records

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"math"
	"sort"
	"strings"

	"github.com/gatehouse-dev/gatehouse/edge/httpx"
	"github.com/gatehouse-dev/gatehouse/edge/store"
	"github.com/gatehouse-dev/gatehouse/index/fields"
	"github.com/gatehouse-dev/gatehouse/index/title"
)

// Query is a record list request, with the raw parameters of the interface.
type Query struct {
	Project, Collection string
	// Secret is true for a secret key: private fields are read, filtered and sorted.
	Secret   bool
	Filters  []string
	Q        string
	Sort     string
	Limit    int
	Cursor   string
	Populate string
	Fields   string
}

// Page is one page of rendered records and the cursor of the next ("" on the last page).
type Page struct {
	Items [][]byte
	Next  string
}

// plan is a compiled query.
type plan struct {
	sch     *Schema
	secret  bool
	filters []Filter
	words   []string
	sort    []SortKey
	limit   int
	after   *tuple
	scope   string
	// lead is the eq/in filter whose compound index with the single sort key the ordered walk
	// uses (nil: the sort key's own index); leadCount is how many records it selects.
	lead      *Filter
	leadCount int64
}

// tuple is a record's position in the sort order: its sort values and id.
type tuple struct {
	vals [][]byte
	id   string
}

func (p *plan) tupleOf(r *record) tuple {
	t := tuple{vals: make([][]byte, len(p.sort)), id: r.id}
	for i, k := range p.sort {
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
func (p *plan) compare(a, b tuple) int {
	for i, k := range p.sort {
		c := bytes.Compare(a.vals[i], b.vals[i])
		if k.Desc {
			c = -c
		}
		if c != 0 {
			return c
		}
	}
	c := strings.Compare(a.id, b.id)
	if p.sort[0].Desc {
		c = -c
	}
	return c
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

// match reports whether a stored record is a published result of the query.
func (p *plan) match(r *record) bool {
	if !r.published {
		return false
	}
	for i := range p.filters {
		if !p.filters[i].match(r) {
			return false
		}
	}
	if len(p.words) > 0 {
		t := ""
		if v := r.values(fieldTitle); len(v) == 1 {
			if s, err := fields.Decode(v[0]); err == nil {
				t, _ = s.(string)
			}
		}
		if !title.Matches(p.words, t) {
			return false
		}
	}
	return true
}

// compile checks and compiles the filter, q and sort parameters.
func (s *Service) compile(sch *Schema, secret bool, filters []string, q, sortRaw string) (*plan, error) {
	p := &plan{sch: sch, secret: secret}
	keys := make([]string, 0, len(filters))
	for _, raw := range filters {
		f, err := compileFilter(sch, raw, secret)
		if err != nil {
			return nil, err
		}
		p.filters = append(p.filters, f)
		keys = append(keys, f.key())
	}
	sort.Strings(keys)
	p.words = title.Words(q)
	var err error
	if p.sort, err = parseSort(sch, sortRaw, secret); err != nil {
		return nil, err
	}
	var sb strings.Builder
	sb.WriteString(sch.Project + "\x00" + sch.Name + "\x00")
	if secret {
		sb.WriteString("s")
	}
	for _, k := range p.sort {
		sb.WriteString("\x00")
		if k.Desc {
			sb.WriteString("-")
		}
		sb.WriteString(k.Field)
	}
	sb.WriteString("\x00q=" + strings.Join(p.words, " "))
	for _, k := range keys {
		sb.WriteString("\x00f=" + k)
	}
	p.scope = sb.String()
	return p, nil
}

func encodeCursor(t tuple) []byte {
	b := []byte{1}
	b = binary.AppendUvarint(b, uint64(len(t.vals)))
	for _, v := range t.vals {
		b = putBytes(b, v)
	}
	return append(b, t.id...)
}

// decodeCursor reads a cursor payload made by encodeCursor for a plan with n sort keys.
func decodeCursor(b []byte, n int) (tuple, error) {
	rd := &reader{b: b}
	if rd.byte1() != 1 || rd.uvarint() != n || rd.err {
		return tuple{}, httpx.ErrInvalidCursor
	}
	t := tuple{vals: make([][]byte, n)}
	for i := 0; i < n; i++ {
		v := rd.bytes()
		if rd.err {
			return tuple{}, httpx.ErrInvalidCursor
		}
		if l, err := fields.Len(v); err != nil || l != len(v) {
			return tuple{}, httpx.ErrInvalidCursor
		}
		t.vals[i] = v
	}
	t.id = string(rd.b)
	if t.id == "" {
		return tuple{}, httpx.ErrInvalidCursor
	}
	return t, nil
}

// List runs a list query.
func (s *Service) List(ctx context.Context, q Query) (Page, error) {
	sch, err := s.readable(ctx, q.Project, q.Collection, q.Secret)
	if err != nil {
		return Page{}, err
	}
	p, err := s.compile(sch, q.Secret, q.Filters, q.Q, q.Sort)
	if err != nil {
		return Page{}, err
	}
	p.limit = q.Limit
	if p.limit <= 0 {
		p.limit = 25
	}
	if q.Cursor != "" {
		payload, err := s.cursors.Decode(p.scope, q.Cursor)
		if err != nil {
			return Page{}, err
		}
		t, err := decodeCursor(payload, len(p.sort))
		if err != nil {
			return Page{}, err
		}
		p.after = &t
	}
	out, err := s.newOutput(ctx, sch, q.Secret, q.Populate, q.Fields)
	if err != nil {
		return Page{}, err
	}
	var page Page
	err = s.view(ctx, func(rd *recReader) error {
		recs, err := s.collect(ctx, rd, p)
		if err != nil {
			return err
		}
		if len(recs) > p.limit {
			recs = recs[:p.limit]
			page.Next = s.cursors.Encode(p.scope, encodeCursor(p.tupleOf(recs[len(recs)-1])))
		}
		page.Items, err = out.render(rd, recs)
		return err
	})
	if err != nil {
		return Page{}, err
	}
	page.Items, err = s.applyReadFilter(ctx, q.Project, q.Collection, page.Items)
	return page, err
}

// Get reads one published record.
func (s *Service) Get(ctx context.Context, project, coll, id string, secret bool, populate, fieldsSel string) ([]byte, error) {
	sch, err := s.readable(ctx, project, coll, secret)
	if err != nil {
		return nil, err
	}
	out, err := s.newOutput(ctx, sch, secret, populate, fieldsSel)
	if err != nil {
		return nil, err
	}
	var items [][]byte
	err = s.view(ctx, func(rd *recReader) error {
		r, err := rd.get(project, coll, id)
		if err != nil {
			return err
		}
		if r == nil || !r.published {
			return ErrRecordNotFound
		}
		items, err = out.render(rd, []*record{r})
		return err
	})
	if err != nil {
		return nil, err
	}
	items, err = s.applyReadFilter(ctx, project, coll, items)
	if err != nil {
		return nil, err
	}
	if len(items) == 0 {
		return nil, ErrRecordNotFound
	}
	return items[0], nil
}

// estimate reads a counter for the planner: from a cache when no write committed since the
// cached value was read, else from the store. Plans only, never answers, depend on it.
func (rd *recReader) estimate(k []byte) (int64, error) {
	if c, ok := rd.s.estimates.Get(string(k)); ok && c.gen == rd.gen && rd.s.gen.Load() == rd.gen {
		return c.n, nil
	}
	n, err := readCounter(rd.txn, k)
	if err == nil && rd.s.gen.Load() == rd.gen {
		rd.s.estimates.Add(string(k), estimate{n: n, gen: rd.gen})
	}
	return n, err
}

// getRecord reads and decodes one stored record (nil when missing).
func getRecord(txn *store.Txn, project, coll, id string) (*record, error) {
	raw, err := txn.Get(recKey(project, coll, id))
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return decodeRecord(id, raw)
}

// collect returns up to limit+1 matching records after the cursor, in sort order.
func (s *Service) collect(ctx context.Context, rd *recReader, p *plan) ([]*record, error) {
	txn := rd.txn
	want := p.limit + 1
	if len(p.words) > 0 && len(p.filters) == 0 && len(p.sort) == 1 && p.sort[0].Field == fieldCreatedAt {
		return s.collectByTitle(rd, p, want)
	}
	ids, ok, err := s.candidates(rd, p)
	if err != nil {
		return nil, err
	}
	if ok && len(p.sort) == 1 && len(ids) > 4*want {
		// A large candidate set in a single-key order: walk the sort index keys-only and read
		// only the records in the set, when that walk (keys are ~20x cheaper than record
		// reads) costs less than reading every candidate.
		total, err := rd.estimate(countKey(p.sch.Project, p.sch.Name))
		if err != nil {
			return nil, err
		}
		if p.lead != nil {
			total = p.leadCount // the compound walk visits only the lead's entries
		}
		walk := float64(want) * float64(total) / float64(len(ids))
		if walk/20 < float64(len(ids)) {
			member := make(map[string]struct{}, len(ids))
			for _, id := range ids {
				member[id] = struct{}{}
			}
			return s.scanSorted(ctx, rd, p, want, member)
		}
	}
	if ok {
		var recs []*record
		var tuples []tuple
		for _, id := range ids {
			r, err := rd.get(p.sch.Project, p.sch.Name, id)
			if err != nil {
				return nil, err
			}
			t, ok := p.candidate(r)
			if !ok {
				continue
			}
			recs = append(recs, r)
			tuples = append(tuples, t)
		}
		return topK(p, recs, tuples, want), nil
	}
	if len(p.sort) == 1 {
		return s.scanSorted(ctx, rd, p, want, nil)
	}
	// Several sort keys and nothing selective: stream every record, keep the best want.
	var recs []*record
	var tuples []tuple
	err = txn.Iterate(store.IterOptions{Prefix: recPrefix(p.sch.Project, p.sch.Name)}, func(k, v []byte) (bool, error) {
		r, err := decodeRecord(store.LastPart(k), v)
		if err != nil {
			return false, err
		}
		t, ok := p.candidate(r)
		if !ok {
			return true, nil
		}
		recs = append(recs, r)
		tuples = append(tuples, t)
		if len(recs) >= 4*want+64 {
			recs = topK(p, recs, tuples, want)
			tuples = tuples[:0]
			for _, r := range recs {
				tuples = append(tuples, p.tupleOf(r))
			}
		}
		return ctx.Err() == nil, ctx.Err()
	})
	if err != nil {
		return nil, err
	}
	return topK(p, recs, tuples, want), nil
}

// collectByTitle answers q without filters in createdAt order from the title index, which
// returns its matches in that order from the cursor on, in batches: records are read in that
// order until want match, so a page reads about want records however many titles match.
// Every record is re-checked, and the page is ordered by the records' own values, so a
// lagging index can miss a record but never return a wrong one.
func (s *Service) collectByTitle(rd *recReader, p *plan, want int) ([]*record, error) {
	desc := p.sort[0].Desc
	var after *title.Hit
	if p.after != nil {
		if c, err := fields.Decode(p.after.vals[0]); err == nil {
			if f, ok := c.(float64); ok {
				after = &title.Hit{ID: p.after.id, CreatedMs: f}
			}
		}
	}
	var recs []*record
	var tuples []tuple
	batch := 2 * want
	for {
		hits, err := s.titles.SearchSorted(p.sch.Project, p.sch.Name, p.words, after, batch, desc)
		if err != nil {
			return nil, err
		}
		for _, h := range hits {
			r, err := rd.get(p.sch.Project, p.sch.Name, h.ID)
			if err != nil {
				return nil, err
			}
			t, ok := p.candidate(r)
			if !ok {
				continue
			}
			recs = append(recs, r)
			tuples = append(tuples, t)
			if len(recs) >= want {
				return topK(p, recs, tuples, want), nil
			}
		}
		if len(hits) < batch || math.IsNaN(hits[len(hits)-1].CreatedMs) {
			return topK(p, recs, tuples, want), nil
		}
		after = &hits[len(hits)-1]
		batch = min(batch*4, 4096)
	}
}

// topK sorts records by their tuples and keeps the first k.
func topK(p *plan, recs []*record, tuples []tuple, k int) []*record {
	idx := make([]int, len(recs))
	for i := range idx {
		idx[i] = i
	}
	sort.Slice(idx, func(a, b int) bool { return p.compare(tuples[idx[a]], tuples[idx[b]]) < 0 })
	if len(idx) > k {
		idx = idx[:k]
	}
	out := make([]*record, len(idx))
	for i, j := range idx {
		out[i] = recs[j]
	}
	return out
}

// candidates returns the ids of a small superset of the matches when fetching them costs less
// than the ordered scan: the planner compares the smallest complete id set (title search or a
// filter's index range, gathered keys-only) with the records an ordered scan is expected to
// read, want / selectivity. Selectivities come from the per-value counters for eq and in on
// groupable fields (no scan at all), else from the id count over the collection's counter; an
// index range is only gathered up to what the scan would cost, so estimating stays cheap.
func (s *Service) candidates(rd *recReader, p *plan) ([]string, bool, error) {
	txn := rd.txn
	var best []string
	ok := false
	total, err := rd.estimate(countKey(p.sch.Project, p.sch.Name))
	if err != nil {
		return nil, false, err
	}
	if total < 1 {
		total = 1
	}
	want := float64(p.limit + 1)
	sel := 1.0      // every filter and q
	selOther := 1.0 // all but a range filter on the single sort key
	rangeSize := -1.0
	leadSel := 1.0 // the part of selOther due to p.lead
	onSort := func(f *Filter) bool {
		return len(p.sort) == 1 && f.Field == p.sort[0].Field && f.Op != "in" && rangeSize < 0
	}
	note := func(f *Filter, n float64) {
		fs := min(n/float64(total), 1)
		sel *= fs
		if f != nil && onSort(f) {
			rangeSize = n
		} else {
			selOther *= fs
		}
	}
	scanCost := func() float64 {
		if len(p.sort) != 1 {
			return float64(total)
		}
		c := want / max(sel, 1e-9)
		if rangeSize >= 0 && p.sort[0].Field != fieldID {
			c = min(rangeSize, want/max(selOther, 1e-9))
		}
		if p.lead != nil {
			// The compound walk visits only the lead's records, until want match the rest.
			rest := 1.0
			if leadSel > 0 {
				rest = selOther / leadSel
			}
			c = min(c, float64(p.leadCount), want/max(rest, 1e-9))
		}
		return c
	}
	if len(p.words) > 0 {
		ids, err := s.titles.Search(p.sch.Project, p.sch.Name, p.words, s.qLimit)
		switch {
		case err == nil:
			best, ok = ids, true
			note(nil, float64(len(ids)))
		case errors.Is(err, title.ErrTooMany):
			note(nil, float64(s.qLimit))
		default:
			return nil, false, err
		}
	}
	type pending struct {
		f      *Filter
		ranges []fields.Range
		known  float64 // exact count from counters, -1 when unknown
	}
	var todo []pending
	for i := range p.filters {
		f := &p.filters[i]
		ranges := filterRanges(f)
		if ranges == nil {
			continue
		}
		pd := pending{f: f, ranges: ranges, known: -1}
		if f.f.Groupable() && (f.Op == "eq" || f.Op == "in") {
			var n int64
			for _, v := range f.Values {
				c, err := rd.estimate(append(groupPrefix(p.sch.Project, p.sch.Name, f.Field), v...))
				if err != nil {
					return nil, false, err
				}
				n += c
			}
			pd.known = float64(n)
			note(f, pd.known)
			if s.compoundReady.Load() && len(p.sort) == 1 && p.sch.hasCompound(f.Field, p.sort[0].Field) &&
				(p.lead == nil || n < p.leadCount) {
				p.lead, p.leadCount, leadSel = f, n, min(float64(n)/float64(total), 1)
			}
		}
		todo = append(todo, pd)
	}
	// Gather the ranges whose counts are unknown first (they refine the scan cost), then the
	// known ones small enough to beat it.
	sort.SliceStable(todo, func(i, j int) bool { return todo[i].known < todo[j].known })
	for _, pd := range todo {
		if pd.known < 0 && len(p.sort) == 1 && pd.f.Field == p.sort[0].Field && pd.f.Op != "in" {
			// The ordered walk is narrowed to this range and stops early: gathering the range
			// as a candidate set can never read fewer records.
			continue
		}
		limit := min(float64(s.candLimit), scanCost()+1)
		if ok {
			limit = min(limit, float64(len(best)))
		}
		if pd.known >= 0 && pd.known >= limit {
			continue
		}
		lim := int(limit)
		if lim < 1 {
			lim = 1
		}
		ids, complete, err := collectIDs(txn, idxPrefix(p.sch.Project, p.sch.Name, pd.f.Field), pd.ranges, lim)
		if err != nil {
			return nil, false, err
		}
		if pd.known < 0 {
			n := float64(lim)
			if complete {
				n = float64(len(ids))
			}
			note(pd.f, n)
		}
		if complete && (!ok || len(ids) < len(best)) {
			best, ok = ids, true
		}
	}
	if !ok || float64(len(best)) > scanCost() {
		return nil, false, nil
	}
	return best, true, nil
}

// filterRanges returns the index ranges a filter selects, or nil when it needs a full scan.
func filterRanges(f *Filter) []fields.Range {
	if f.Field == fieldID || !f.f.Indexed {
		return nil
	}
	if f.Op == "in" {
		out := make([]fields.Range, 0, len(f.Values))
		for _, v := range f.Values {
			out = append(out, fields.Eq(v))
		}
		return out
	}
	if r, ok := f.rng(); ok {
		return []fields.Range{r}
	}
	return nil
}

// collectIDs gathers the distinct ids in ranges; complete is false when there are limit or more.
func collectIDs(txn *store.Txn, prefix []byte, ranges []fields.Range, limit int) ([]string, bool, error) {
	seen := map[string]struct{}{}
	var ids []string
	for _, r := range ranges {
		err := fields.Scan(txn, prefix, fields.ScanOptions{Range: r}, func(_ []byte, id string) (bool, error) {
			if _, dup := seen[id]; !dup {
				seen[id] = struct{}{}
				ids = append(ids, id)
			}
			return len(ids) < limit, nil
		})
		if err != nil {
			return nil, false, err
		}
		if len(ids) >= limit {
			return nil, false, nil
		}
	}
	return ids, true, nil
}

// scanSorted walks the index of the single sort key (or the records, for id) in order from
// the cursor, checking each record, until want matches.
// With member, only ids in it are read (the rest of the walk is keys only).
func (s *Service) scanSorted(ctx context.Context, rd *recReader, p *plan, want int, member map[string]struct{}) ([]*record, error) {
	txn := rd.txn
	k := p.sort[0]
	var out []*record
	if k.Field == fieldID {
		prefix := recPrefix(p.sch.Project, p.sch.Name)
		var start []byte
		if p.after != nil {
			start = append(append([]byte{}, prefix...), p.after.id...)
			if !k.Desc {
				start = append(start, 0)
			}
		}
		err := txn.Iterate(store.IterOptions{Prefix: prefix, Start: start, Reverse: k.Desc, KeysOnly: member != nil}, func(key, v []byte) (bool, error) {
			id := store.LastPart(key)
			if p.after != nil && id == p.after.id {
				return true, nil
			}
			var r *record
			var err error
			if member != nil {
				if _, in := member[id]; !in {
					return true, nil
				}
				r, err = rd.get(p.sch.Project, p.sch.Name, id)
			} else {
				r, err = decodeRecord(id, v)
			}
			if err != nil {
				return false, err
			}
			if r != nil && p.match(r) {
				out = append(out, r)
			}
			return len(out) < want && ctx.Err() == nil, ctx.Err()
		})
		return out, err
	}
	if p.lead != nil {
		return s.scanCompound(ctx, rd, p, want, member)
	}
	prefix := idxPrefix(p.sch.Project, p.sch.Name, k.Field)
	o := fields.ScanOptions{Reverse: k.Desc, Range: p.sortRange()}
	if p.after != nil {
		o.After = fields.Entry(prefix, p.after.vals[0], p.after.id)
	}
	err := fields.Scan(txn, prefix, o, func(_ []byte, id string) (bool, error) {
		if member != nil {
			if _, in := member[id]; !in {
				return true, nil
			}
		}
		r, err := rd.get(p.sch.Project, p.sch.Name, id)
		if err != nil {
			return false, err
		}
		if r != nil && p.match(r) {
			out = append(out, r)
		}
		return len(out) < want && ctx.Err() == nil, ctx.Err()
	})
	return out, err
}

// sortRange is the range a filter on the single sort key selects (all values when none).
func (p *plan) sortRange() fields.Range {
	for i := range p.filters {
		if f := &p.filters[i]; f.Field == p.sort[0].Field && f.Op != "in" {
			if r, ok := f.rng(); ok {
				return r
			}
		}
	}
	return fields.Range{}
}

// each visits every matching record once, in no particular order. Index-usable filters and
// the title search are intersected as id sets, keys only, so only records that can match are
// read; without any, every record is read.
func (s *Service) each(ctx context.Context, rd *recReader, p *plan, fn func(r *record)) error {
	txn := rd.txn
	// The first id set is materialised (ids → slot); every further set is walked keys-only
	// and only advances the round of the ids it shares, without allocating per entry.
	var slot map[string]int32
	var round []uint16
	var cur uint16
	have := false
	first := func(ids []string) {
		slot = make(map[string]int32, len(ids))
		round = make([]uint16, 0, len(ids))
		for _, id := range ids {
			if _, dup := slot[id]; !dup {
				slot[id] = int32(len(round))
				round = append(round, 0)
			}
		}
		have = true
	}
	if len(p.words) > 0 {
		ids, err := s.titles.Search(p.sch.Project, p.sch.Name, p.words, s.qLimit)
		switch {
		case err == nil:
			first(ids)
		case !errors.Is(err, title.ErrTooMany):
			return err
		}
	}
	// Materialise the filter known to be smallest (per-value counters), walk the others.
	order := make([]int, 0, len(p.filters))
	known := make([]int64, len(p.filters))
	for i := range p.filters {
		f := &p.filters[i]
		if filterRanges(f) == nil {
			continue
		}
		known[i] = math.MaxInt64
		if f.f.Groupable() && (f.Op == "eq" || f.Op == "in") {
			var n int64
			for _, v := range f.Values {
				c, err := readCounter(txn, append(groupPrefix(p.sch.Project, p.sch.Name, f.Field), v...))
				if err != nil {
					return err
				}
				n += c
			}
			known[i] = n
		}
		order = append(order, i)
	}
	// A range of unknown size is counted keys-only (no allocation) up to the smallest known
	// count, so that the smallest set is the one materialised.
	if !have && len(order) > 1 {
		least := int64(math.MaxInt64)
		for _, i := range order {
			least = min(least, known[i])
		}
		for _, i := range order {
			if known[i] != math.MaxInt64 || least == math.MaxInt64 {
				continue
			}
			var n int64
			for _, r := range filterRanges(&p.filters[i]) {
				c, err := fields.Count(txn, idxPrefix(p.sch.Project, p.sch.Name, p.filters[i].Field), r, int(least-n))
				if err != nil {
					return err
				}
				if n += int64(c); n >= least {
					break
				}
			}
			if n < least {
				known[i], least = n, n
			}
		}
	}
	sort.SliceStable(order, func(a, b int) bool { return known[order[a]] < known[order[b]] })
	for _, i := range order {
		f := &p.filters[i]
		ranges := filterRanges(f)
		prefix := idxPrefix(p.sch.Project, p.sch.Name, f.Field)
		if !have {
			ids, _, err := collectIDs(txn, prefix, ranges, math.MaxInt)
			if err != nil {
				return err
			}
			first(ids)
		} else {
			hits := 0
			for _, r := range ranges {
				err := fields.ScanBytes(txn, prefix, fields.ScanOptions{Range: r}, func(_, id []byte) (bool, error) {
					if j, ok := slot[string(id)]; ok && round[j] == cur {
						round[j] = cur + 1
						hits++
					}
					return true, nil
				})
				if err != nil {
					return err
				}
			}
			cur++
			if hits == 0 {
				return nil
			}
		}
		if len(round) == 0 {
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
	if have {
		for id, j := range slot {
			if round[j] != cur {
				continue
			}
			r, err := rd.peek(p.sch.Project, p.sch.Name, id)
			if err != nil {
				return err
			}
			if r != nil && p.match(r) {
				fn(r)
			}
		}
		return ctx.Err()
	}
	return txn.Iterate(store.IterOptions{Prefix: recPrefix(p.sch.Project, p.sch.Name)}, func(k, v []byte) (bool, error) {
		r, err := decodeRecord(store.LastPart(k), v)
		if err != nil {
			return false, err
		}
		if p.match(r) {
			fn(r)
		}
		return ctx.Err() == nil, ctx.Err()
	})
}
