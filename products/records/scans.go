package records

import (
	"context"
	"errors"
	"math"
	"sort"

	"github.com/gatehouse-dev/gatehouse/edge/store"
	"github.com/gatehouse-dev/gatehouse/index/fields"
	"github.com/gatehouse-dev/gatehouse/index/title"
)

// The scans execute plans against the store: they read the stats the planner needs, gather
// candidate id sets, walk indexes and read records. Every record a scan returns has been
// checked against the criteria, so a plan can only make a query slower, never wrong.

// estimate reads a counter for the planner: from a cache when no write committed since the
// cached value was read (on a shared store: and it is recent), else from the store. Plans
// only, never answers, depend on it.
func (rd *recReader) estimate(k []byte) (int64, error) {
	now := rd.s.now().UnixMilli()
	if c, ok := rd.s.estimates.Get(string(k)); ok && c.gen == rd.gen && rd.s.gen.Load() == rd.gen &&
		(!rd.s.shared || now-c.at < sharedEstimateAge.Milliseconds()) {
		return c.n, nil
	}
	n, err := readCounter(rd.txn, k)
	if err == nil && rd.s.gen.Load() == rd.gen {
		rd.s.estimates.Add(string(k), estimate{n: n, gen: rd.gen, at: now})
	}
	return n, err
}

// readStats reads what the planner needs to know of the data for c: the per-value counters
// of the counted filters and, for a list, the collection's count (nothing for a title-order
// list).
func (s *Service) readStats(rd *recReader, c *criteria, list bool) (stats, error) {
	st := stats{counts: make([]int64, len(c.filters)), compound: s.compoundReady.Load(), projections: s.projReady.Load()}
	for i := range st.counts {
		st.counts[i] = -1
	}
	if list {
		if c.titleOrder() {
			return st, nil
		}
		var err error
		if st.total, err = rd.estimate(countKey(c.sch.Project, c.sch.Name)); err != nil {
			return st, err
		}
	}
	for i := range c.filters {
		f := &c.filters[i]
		if !counted(f) {
			continue
		}
		var n int64
		for _, v := range f.Values {
			k, err := rd.estimate(append(groupPrefix(c.sch.Project, c.sch.Name, f.Field), v...))
			if err != nil {
				return st, err
			}
			n += k
		}
		st.counts[i] = n
	}
	return st, nil
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
	want := p.limit + 1
	if p.access == byTitle {
		return s.collectByTitle(rd, p, want)
	}
	ids, ok, err := s.candidates(rd, p)
	if err != nil {
		return nil, err
	}
	if ok && p.access == ordered && len(ids) > 4*want {
		// A large candidate set in a single-key order: walk the sort index keys-only and read
		// only the records in the set, when that walk (keys are ~20x cheaper than record
		// reads) costs less than reading every candidate.
		total := p.total
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
		for len(ids) > 0 {
			n := min(len(ids), getBatch)
			page, err := rd.getAll(p.sch.Project, p.sch.Name, ids[:n])
			if err != nil {
				return nil, err
			}
			ids = ids[n:]
			recs, tuples = p.keep(page, recs, tuples)
		}
		return topK(p, recs, tuples, want), nil
	}
	if p.access == ordered {
		return s.scanSorted(ctx, rd, p, want, nil)
	}
	// Several sort keys and nothing selective: stream every record, keep the best want.
	return s.stream(ctx, rd, p, want)
}

// stream reads every record of the plan's collection and keeps the best want candidates, in
// sort order (the plan's access path is not consulted: it works for any criteria).
func (s *Service) stream(ctx context.Context, rd *recReader, p *plan, want int) ([]*record, error) {
	var recs []*record
	var tuples []tuple
	err := rd.txn.Iterate(store.IterOptions{Prefix: recPrefix(p.sch.Project, p.sch.Name)}, func(k, v []byte) (bool, error) {
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
		// The hits are read want-len(recs) at a time: as many records as one get per hit
		// until want match would read, in fewer round trips (getAll).
		for rest := hits; len(rest) > 0; {
			n := min(len(rest), want-len(recs), getBatch)
			ids := make([]string, n)
			for i, h := range rest[:n] {
				ids[i] = h.ID
			}
			rest = rest[n:]
			page, err := rd.getAll(p.sch.Project, p.sch.Name, ids)
			if err != nil {
				return nil, err
			}
			recs, tuples = p.keep(page, recs, tuples)
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
// than the plan's walk: it compares the smallest complete id set (the title search, or a
// source's index ranges gathered keys-only, in the plan's gather order) with the records the
// walk is expected to read (cost). A range is only gathered up to what the walk would cost,
// and one whose count is known is skipped when that count is already too large, so
// estimating stays cheap.
func (s *Service) candidates(rd *recReader, p *plan) ([]string, bool, error) {
	var best []string
	ok := false
	c := p.newCost()
	if len(p.words) > 0 {
		ids, err := s.titles.Search(p.sch.Project, p.sch.Name, p.words, s.qLimit)
		switch {
		case err == nil:
			best, ok = ids, true
			c.note(nil, float64(len(ids)))
		case errors.Is(err, title.ErrTooMany):
			c.note(nil, float64(s.qLimit))
		default:
			return nil, false, err
		}
	}
	for _, src := range p.sources {
		if src.known >= 0 {
			c.note(src.f, float64(src.known))
		}
	}
	for _, i := range p.gather {
		src := &p.sources[i]
		limit := min(float64(s.candLimit), c.scan()+1)
		if ok {
			limit = min(limit, float64(len(best)))
		}
		if src.known >= 0 && float64(src.known) >= limit {
			continue
		}
		lim := max(int(limit), 1)
		ids, complete, err := collectIDs(rd.txn, idxPrefix(p.sch.Project, p.sch.Name, src.f.Field), src.ranges, lim)
		if err != nil {
			return nil, false, err
		}
		if src.known < 0 {
			n := float64(lim)
			if complete {
				n = float64(len(ids))
			}
			c.note(src.f, n)
		}
		if complete && (!ok || len(ids) < len(best)) {
			best, ok = ids, true
		}
	}
	if !ok || float64(len(best)) > c.scan() {
		return nil, false, nil
	}
	return best, true, nil
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
	// Records read by id (member walks, index walks) are queued in pr and read a page at a
	// time; take adds the matching ones to out.
	pr := newPageReads(rd, p.sch.Project, p.sch.Name)
	take := func() error {
		recs, err := pr.flush()
		for _, r := range recs {
			if r != nil && p.match(r) {
				out = append(out, r)
			}
		}
		return err
	}
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
			if member != nil {
				if _, in := member[id]; !in {
					return true, nil
				}
				if !pr.add(id, want-len(out)) {
					return ctx.Err() == nil, ctx.Err()
				}
				if err := take(); err != nil {
					return false, err
				}
				return len(out) < want && ctx.Err() == nil, ctx.Err()
			}
			r, err := decodeRecord(id, v)
			if err != nil {
				return false, err
			}
			if r != nil && p.match(r) {
				out = append(out, r)
			}
			return len(out) < want && ctx.Err() == nil, ctx.Err()
		})
		if err == nil {
			err = take() // the ids queued when the walk ended
		}
		return out, err
	}
	if p.lead != nil {
		return s.scanCompound(ctx, rd, p, want, member)
	}
	prefix := idxPrefix(p.sch.Project, p.sch.Name, k.Field)
	o := fields.ScanOptions{Reverse: k.Desc, Range: p.walk}
	if p.after != nil {
		o.After = fields.Entry(prefix, p.after.vals[0], p.after.id)
	}
	err := fields.Scan(txn, prefix, o, func(_ []byte, id string) (bool, error) {
		if member != nil {
			if _, in := member[id]; !in {
				return true, nil
			}
		}
		if !pr.add(id, want-len(out)) {
			return ctx.Err() == nil, ctx.Err()
		}
		if err := take(); err != nil {
			return false, err
		}
		return len(out) < want && ctx.Err() == nil, ctx.Err()
	})
	if err == nil {
		err = take() // the ids queued when the walk ended
	}
	return out, err
}

// visit calls fn once for every record matching an aggregate's plan, in no particular order:
// by the compound walk when the plan chose it, else by intersect.
func (s *Service) visit(ctx context.Context, rd *recReader, p *plan, fn func(r *record)) error {
	if p.access == walkCompound {
		return s.eachCompound(ctx, rd, p, fn)
	}
	return s.intersect(ctx, rd, p, fn)
}

// intersect visits every matching record once. The plan's sources and the title search are
// intersected as id sets, keys only, so only records that can match are read; without any,
// every record is read.
func (s *Service) intersect(ctx context.Context, rd *recReader, p *plan, fn func(r *record)) error {
	sets := idSets{}
	if len(p.words) > 0 {
		ids, err := s.titles.Search(p.sch.Project, p.sch.Name, p.words, s.qLimit)
		switch {
		case err == nil:
			sets.first(ids)
		case !errors.Is(err, title.ErrTooMany):
			return err
		}
	}
	order, err := s.intersectOrder(rd, p, sets.have)
	if err != nil {
		return err
	}
	for _, i := range order {
		src := &p.sources[i]
		prefix := idxPrefix(p.sch.Project, p.sch.Name, src.f.Field)
		if !sets.have {
			ids, _, err := collectIDs(rd.txn, prefix, src.ranges, math.MaxInt)
			if err != nil {
				return err
			}
			sets.first(ids)
		} else {
			hits, err := sets.and(rd.txn, prefix, src.ranges)
			if err != nil {
				return err
			}
			if hits == 0 {
				return nil
			}
		}
		if len(sets.round) == 0 {
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
	if sets.have {
		// The intersection's records are read getBatch at a time (one round trip each on a
		// shared store).
		ids := make([]string, 0, min(len(sets.slot), getBatch))
		flush := func() error {
			recs, err := rd.peekAll(p.sch.Project, p.sch.Name, ids)
			if err != nil {
				return err
			}
			for _, r := range recs {
				if r != nil && p.match(r) {
					fn(r)
				}
			}
			ids = ids[:0]
			return ctx.Err()
		}
		for id, j := range sets.slot {
			if sets.round[j] != sets.cur {
				continue
			}
			if ids = append(ids, id); len(ids) == getBatch {
				if err := flush(); err != nil {
					return err
				}
			}
		}
		return flush()
	}
	return rd.txn.Iterate(store.IterOptions{Prefix: recPrefix(p.sch.Project, p.sch.Name)}, func(k, v []byte) (bool, error) {
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

// intersectOrder returns the order in which intersect walks the plan's sources: smallest
// first, so that the smallest set is the one materialised. When no set is materialised yet
// (have), a range of unknown size is counted keys-only (no allocation) up to the smallest
// known count.
func (s *Service) intersectOrder(rd *recReader, p *plan, have bool) ([]int, error) {
	order := make([]int, len(p.sources))
	known := make([]int64, len(p.sources))
	for i, src := range p.sources {
		order[i] = i
		known[i] = src.known
		if known[i] < 0 {
			known[i] = math.MaxInt64
		}
	}
	if !have && len(order) > 1 {
		least := int64(math.MaxInt64)
		for _, n := range known {
			least = min(least, n)
		}
		for i, src := range p.sources {
			if known[i] != math.MaxInt64 || least == math.MaxInt64 {
				continue
			}
			var n int64
			for _, r := range src.ranges {
				c, err := fields.Count(rd.txn, idxPrefix(p.sch.Project, p.sch.Name, src.f.Field), r, int(least-n))
				if err != nil {
					return nil, err
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
	return order, nil
}

// idSets intersects id sets: the first set is materialised (ids → slot); every further set
// is walked keys-only and only advances the round of the ids it shares, without allocating
// per entry. An id is in the intersection when its round is cur.
type idSets struct {
	slot  map[string]int32
	round []uint16
	cur   uint16
	have  bool
}

func (x *idSets) first(ids []string) {
	x.slot = make(map[string]int32, len(ids))
	x.round = make([]uint16, 0, len(ids))
	for _, id := range ids {
		if _, dup := x.slot[id]; !dup {
			x.slot[id] = int32(len(x.round))
			x.round = append(x.round, 0)
		}
	}
	x.have = true
}

// and intersects the set with the ids of ranges under prefix; hits is the intersection's size.
func (x *idSets) and(txn *store.Txn, prefix []byte, ranges []fields.Range) (int, error) {
	hits := 0
	for _, r := range ranges {
		err := fields.ScanBytes(txn, prefix, fields.ScanOptions{Range: r}, func(_, id []byte) (bool, error) {
			if j, ok := x.slot[string(id)]; ok && x.round[j] == x.cur {
				x.round[j] = x.cur + 1
				hits++
			}
			return true, nil
		})
		if err != nil {
			return 0, err
		}
	}
	x.cur++
	return hits, nil
}
