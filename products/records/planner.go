package records

import (
	"sort"
	"strings"

	"github.com/gatehouse-dev/gatehouse/index/fields"
	"github.com/gatehouse-dev/gatehouse/index/title"
)

// The planner turns the filter, q and sort parameters into a plan. It is pure: it reads no
// store. What it knows of the data comes in a stats value, read by the scans beforehand
// (readStats), so the same parameters and stats always give the same plan.

// compile checks and compiles the filter, q and sort parameters.
func compile(sch *Schema, secret bool, filters []string, q, sortRaw string) (*criteria, error) {
	c := &criteria{sch: sch, secret: secret}
	keys := make([]string, 0, len(filters))
	for _, raw := range filters {
		f, err := compileFilter(sch, raw, secret)
		if err != nil {
			return nil, err
		}
		c.filters = append(c.filters, f)
		keys = append(keys, f.key())
	}
	sort.Strings(keys)
	c.words = title.Words(q)
	if q != "" && len(c.words) == 0 {
		// A q of punctuation and spaces only searches for nothing; answering every record, as
		// if q were absent, would hide the caller's mistake.
		return nil, validation("q", "must contain a letter or a digit")
	}
	var err error
	if c.sort, err = parseSort(sch, sortRaw, secret); err != nil {
		return nil, err
	}
	var sb strings.Builder
	sb.WriteString(sch.Project + "\x00" + sch.Name + "\x00")
	if secret {
		sb.WriteString("s")
	}
	for _, k := range c.sort {
		sb.WriteString("\x00")
		if k.Desc {
			sb.WriteString("-")
		}
		sb.WriteString(k.Field)
	}
	sb.WriteString("\x00q=" + strings.Join(c.words, " "))
	for _, k := range keys {
		sb.WriteString("\x00f=" + k)
	}
	c.scope = sb.String()
	return c, nil
}

// stats is what the planner knows of the data.
type stats struct {
	// total is the collection's record count (lists only: aggregates do not need it).
	total int64
	// counts holds, per filter, the records it selects from the per-value counters (counted
	// filters), else -1.
	counts []int64
	// compound is true once the compound indexes cover every record; projections once their
	// entries carry the projections a compound walk reads.
	compound, projections bool
}

// titleOrder reports whether a list is answered from the title index in createdAt order:
// q without filters, in createdAt order. Such a list needs no stats.
func (c *criteria) titleOrder() bool {
	return len(c.words) > 0 && len(c.filters) == 0 && len(c.sort) == 1 && c.sort[0].Field == fieldCreatedAt
}

// counted reports whether the per-value counters give the number of records f selects: eq
// and in on a groupable indexed field.
func counted(f *Filter) bool {
	return f.f.Groupable() && (f.Op == "eq" || f.Op == "in") && filterRanges(f) != nil
}

// planList plans a list page of limit records after the cursor position after (nil: the
// first page).
func planList(c *criteria, st stats, limit int, after *tuple) *plan {
	p := &plan{criteria: c, limit: limit, after: after, total: st.total, access: stream}
	switch {
	case c.titleOrder():
		p.access = byTitle
		return p
	case len(c.sort) == 1:
		p.access = ordered
		p.walk = c.sortRange()
	}
	for i := range c.filters {
		f := &c.filters[i]
		ranges := filterRanges(f)
		if ranges == nil {
			continue
		}
		src := source{f: f, ranges: ranges, known: st.counts[i]}
		if src.known >= 0 && st.compound && p.access == ordered && c.sch.hasCompound(f.Field, c.sort[0].Field) &&
			(p.lead == nil || src.known < p.leadCount) {
			p.lead, p.leadCount = f, src.known
		}
		p.sources = append(p.sources, src)
	}
	// Gather the ranges whose counts are unknown first (they refine the scan cost), then the
	// known ones (a scan skips those too large to beat the walk).
	for i, src := range p.sources {
		if src.known < 0 && p.onSortKey(src.f) {
			// The ordered walk is narrowed to this range and stops early: gathering the range
			// as a candidate set can never read fewer records.
			continue
		}
		p.gather = append(p.gather, i)
	}
	sort.SliceStable(p.gather, func(i, j int) bool { return p.sources[p.gather[i]].known < p.sources[p.gather[j]].known })
	return p
}

// onSortKey reports whether f is a range (not in) on the single sort key of an ordered plan.
func (p *plan) onSortKey(f *Filter) bool {
	return p.access == ordered && f.Field == p.sort[0].Field && f.Op != "in"
}

// sortRange is the range a filter on the single sort key selects (all values when none).
func (c *criteria) sortRange() fields.Range {
	for i := range c.filters {
		if f := &c.filters[i]; f.Field == c.sort[0].Field && f.Op != "in" {
			if r, ok := f.rng(); ok {
				return r
			}
		}
	}
	return fields.Range{}
}

// planVisit plans an aggregate's visit of every matching record, in no order; group is the
// field whose values are counted (nil for a total).
//
// The compound walk is chosen without q, with an eq or in filter on a lead field L (the one
// with the smallest counter when several), and with every filter and the grouped field among
// L, an order field O that has a compound index with L, id, and the groupable fields (whose
// values each entry carries: its projection). It walks the entries of each value of L,
// narrowed by the first range filter on O (createdAt, the whole value, when there is none).
// Otherwise the index-usable filters and the title search are intersected as id sets.
func planVisit(c *criteria, st stats, group *Field) *plan {
	p := &plan{criteria: c, access: intersect}
	if !st.projections || len(c.words) > 0 || len(c.filters) == 0 {
		return p.withSources(st)
	}
	var lead *Filter
	var leadCount int64
	for i := range c.filters {
		f := &c.filters[i]
		if st.counts[i] < 0 || !leadField(f.f) || f.f.Array {
			continue
		}
		if lead == nil || st.counts[i] < leadCount {
			lead, leadCount = f, st.counts[i]
		}
	}
	if lead == nil {
		return p.withSources(st)
	}
	order, rng := fieldCreatedAt, fields.Range{}
	for i := range c.filters {
		f := &c.filters[i]
		if f.Op == "in" || !c.sch.hasCompound(lead.Field, f.Field) {
			continue
		}
		if r, ok := f.rng(); ok {
			order, rng = f.Field, r
			break
		}
	}
	covered := func(name string) bool {
		if name == lead.Field || name == order || name == fieldID {
			return true
		}
		g := c.sch.field(name)
		return g != nil && g.Groupable()
	}
	for i := range c.filters {
		if !covered(c.filters[i].Field) {
			return p.withSources(st)
		}
	}
	if group != nil && !covered(group.Name) {
		return p.withSources(st)
	}
	p.access, p.lead, p.leadCount, p.order, p.walk = walkCompound, lead, leadCount, order, rng
	// The fields a check or the count reads; the rest of each projection is skipped.
	p.need = make([]string, 0, len(c.filters)+1)
	for i := range c.filters {
		p.need = append(p.need, c.filters[i].Field)
	}
	if group != nil {
		p.need = append(p.need, group.Name)
	}
	return p
}

// withSources gives an intersect plan its sources: the filters with index ranges.
func (p *plan) withSources(st stats) *plan {
	for i := range p.filters {
		f := &p.filters[i]
		if ranges := filterRanges(f); ranges != nil {
			p.sources = append(p.sources, source{f: f, ranges: ranges, known: st.counts[i]})
		}
	}
	return p
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

// cost estimates how many records an ordered plan's walk reads, refined as a scan learns the
// size of candidate sets (note). It compares the smallest complete id set with the records
// the walk is expected to read, want / selectivity.
type cost struct {
	p     *plan
	total float64
	want  float64
	// sel is the selectivity of every filter and q, selOther of all but a range filter on the
	// single sort key (whose size, when known, is rangeSize), leadSel the part of selOther due
	// to the plan's lead.
	sel, selOther, rangeSize, leadSel float64
}

// newCost starts the estimate of an ordered or streamed list plan.
func (p *plan) newCost() cost {
	c := cost{p: p, total: float64(max(p.total, 1)), want: float64(p.limit + 1), sel: 1, selOther: 1, rangeSize: -1, leadSel: 1}
	if p.lead != nil {
		c.leadSel = min(float64(p.leadCount)/c.total, 1)
	}
	return c
}

// note records that f (nil: the title search) selects n records.
func (c *cost) note(f *Filter, n float64) {
	fs := min(n/c.total, 1)
	c.sel *= fs
	if f != nil && c.p.onSortKey(f) && c.rangeSize < 0 {
		c.rangeSize = n
	} else {
		c.selOther *= fs
	}
}

// scan is the expected number of records the plan's walk reads.
func (c *cost) scan() float64 {
	p := c.p
	if p.access != ordered {
		return c.total
	}
	n := c.want / max(c.sel, 1e-9)
	if c.rangeSize >= 0 && p.sort[0].Field != fieldID {
		n = min(c.rangeSize, c.want/max(c.selOther, 1e-9))
	}
	if p.lead != nil {
		// The compound walk visits only the lead's records, until want match the rest.
		rest := 1.0
		if c.leadSel > 0 {
			rest = c.selOther / c.leadSel
		}
		n = min(n, float64(p.leadCount), c.want/max(rest, 1e-9))
	}
	return n
}
