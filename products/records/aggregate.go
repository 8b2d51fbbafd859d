package records

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"sort"
	"strconv"

	"github.com/gatehouse-dev/gatehouse/edge/store"
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
	p, err := s.compile(sch, q.Secret, q.Filters, q.Q, "")
	if err != nil {
		return nil, err
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
	plain := len(p.filters) == 0 && len(p.words) == 0
	counts := map[string]int{}
	var order [][]byte
	add := func(enc []byte, n int) {
		k := string(enc)
		if _, ok := counts[k]; !ok {
			order = append(order, enc)
		}
		counts[k] += n
	}
	var total int64
	err = s.view(ctx, func(rd *recReader) error {
		txn := rd.txn
		switch {
		case f == nil && plain:
			total, err = readCount(txn, q.Project, q.Collection)
			return err
		case f != nil && plain && f.Groupable():
			// Per-value counters kept on write.
			gp := groupPrefix(q.Project, q.Collection, f.Name)
			return txn.Iterate(store.IterOptions{Prefix: gp}, func(k, v []byte) (bool, error) {
				if len(v) == 8 {
					add(bytes.Clone(k[len(gp):]), int(binary.BigEndian.Uint64(v)))
				}
				return true, nil
			})
		case f != nil && plain:
			// Index walk, keys only: the index holds only published records.
			return fields.Scan(txn, idxPrefix(q.Project, q.Collection, f.Name), fields.ScanOptions{}, func(enc []byte, _ string) (bool, error) {
				if enc[0] != fields.TagNull {
					if n := len(order); n > 0 && bytes.Equal(order[n-1], enc) {
						counts[string(enc)]++
					} else {
						add(bytes.Clone(enc), 1)
					}
				}
				return ctx.Err() == nil, ctx.Err()
			})
		}
		return s.each(ctx, rd, p, func(r *record) {
			total++
			if f == nil {
				return
			}
			for _, enc := range r.values(f.Name) {
				if enc[0] != fields.TagNull {
					add(bytes.Clone(enc), 1)
				}
			}
		})
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
