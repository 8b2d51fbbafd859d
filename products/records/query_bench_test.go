package records

import (
	"context"
	"fmt"
	"math/rand"
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/edge/store"
)

const benchTenants = `
orgs:
  - slug: o
    projects:
      - id: p
        collections:
          - name: c
            public: true
            fields:
              - {name: title, type: text}
              - {name: category, type: select, options: [c0, c1, c2, c3, c4, c5, c6, c7, c8, c9]}
              - {name: tags, type: multiselect, options: [t0, t1, t2, t3, t4, t5, t6, t7]}
              - {name: views, type: number}
              - {name: day, type: date}
`

// BenchmarkQueries runs the query shapes of recordsbench's mixes in process, over 20,000
// records, without HTTP: the planner and the scans alone, with allocations reported, so that
// a planner change can be compared before and after on a busy machine (allocs/op does not
// depend on the load). Each shape cycles through 64 parameter sets (i is taken modulo 64):
// compare runs with -benchtime of a multiple of 64x, e.g. 128x, so they do the same work.
func BenchmarkQueries(b *testing.B) {
	ctx := context.Background()
	db, err := store.Open(store.Options{InMemory: true})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	svc, _ := newCompoundService(b, db, benchTenants)
	const n = 20000
	words := []string{"kalo", "mine", "ruvi", "sato", "zepo", "dafe", "lomi", "neru", "visa", "toze"}
	r := rand.New(rand.NewSource(1))
	var nd strings.Builder
	for i := 0; i < n; i++ {
		tags := []string{}
		for j := 0; j < 8; j++ {
			if r.Intn(3) == 0 {
				tags = append(tags, fmt.Sprintf("%q", fmt.Sprintf("t%d", j)))
			}
		}
		fmt.Fprintf(&nd, `{"id":"post-%d","published":true,"data":{"title":"%s %s %s","category":"c%d","tags":[%s],"views":%d,"day":"2026-01-%02d"}}`+"\n",
			i, words[r.Intn(10)], words[r.Intn(10)], words[r.Intn(10)], r.Intn(10), strings.Join(tags, ","), r.Intn(n), 1+r.Intn(28))
	}
	if rep, err := svc.Import(ctx, "p", "c", strings.NewReader(nd.String())); err != nil || rep.Failed > 0 {
		b.Fatalf("import: %+v, %v", rep, err)
	}
	lists := []struct {
		name string
		q    func(i int) Query
	}{
		{"list/two-filters-sort", func(i int) Query {
			return Query{Filters: []string{fmt.Sprintf("category:eq:c%d", i%10), fmt.Sprintf("views:gte:%d", i*7919%n)}, Sort: "-views"}
		}},
		{"list/q", func(i int) Query { return Query{Q: words[i%10][:3]} }},
		{"list/filter-range-sort", func(i int) Query {
			return Query{Filters: []string{fmt.Sprintf("category:eq:c%d", i%10), fmt.Sprintf("views:lte:%d", i*7919%n)}, Sort: "-views"}
		}},
		{"list/range-other-field", func(i int) Query {
			return Query{Filters: []string{fmt.Sprintf("views:gte:%d", n-i*3%200)}, Sort: "-day"}
		}},
		{"list/two-sort-keys", func(i int) Query {
			return Query{Filters: []string{fmt.Sprintf("tags:eq:t%d", i%8)}, Sort: "category,-views"}
		}},
	}
	for _, l := range lists {
		b.Run(l.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				q := l.q(i % 64)
				q.Project, q.Collection, q.Limit = "p", "c", 25
				if _, err := svc.List(ctx, q); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	aggs := []struct {
		name string
		q    func(i int) AggregateQuery
	}{
		{"aggregate/groupBy-filters", func(i int) AggregateQuery {
			return AggregateQuery{GroupBy: "tags", Filters: []string{fmt.Sprintf("category:eq:c%d", i%10), fmt.Sprintf("views:gte:%d", n-i*31%(n/10))}}
		}},
		{"aggregate/count-q-filter", func(i int) AggregateQuery {
			return AggregateQuery{Q: words[i%10], Filters: []string{fmt.Sprintf("tags:in:t%d,t%d", i%8, (i+3)%8)}}
		}},
		{"aggregate/distinct-range", func(i int) AggregateQuery {
			return AggregateQuery{Distinct: "category", Filters: []string{fmt.Sprintf("views:gte:%d", n-i*31%2000), "day:lte:2026-01-10"}}
		}},
	}
	for _, a := range aggs {
		b.Run(a.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				q := a.q(i % 64)
				q.Project, q.Collection = "p", "c"
				if _, err := svc.Aggregate(ctx, q); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
