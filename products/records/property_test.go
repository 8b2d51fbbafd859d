package records_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/edge/edgetest/storetest"
	"github.com/gatehouse-dev/gatehouse/edge/store"
	"github.com/gatehouse-dev/gatehouse/products/records"
)

const propTenants = `
orgs:
  - slug: o
    projects:
      - id: p
        collections:
          - name: c
            public: true
            fields:
              - {name: title, type: text}
              - {name: n, type: number}
              - {name: s, type: select, options: [a, b, c, d]}
              - {name: t, type: multiselect, options: [x, y, z]}
              - {name: d, type: date}
              - {name: b, type: boolean}
              - {name: l, type: text}
`

// longPool are values of the text field l: short ones, and long ones of which most share their
// first 512 bytes (fields.MaxInline: an index key holds that much of a string), some by far
// longer than PostgreSQL's index takes in a key.
var longPool = func() []string {
	base := strings.Repeat("m", 508)
	return []string{"a", "m", base, base + "abc", base + "abcd", base + "abcd" + "y", base + "abcd" + "z",
		base + "abcd" + strings.Repeat("z", 2000), base + "abcd" + strings.Repeat("a", 3000), base + "abcd" + "ma",
		base + "abce" + "x", base + "abcd" + strings.Repeat("y", 700), base + "b" + strings.Repeat("q", 900)}
}()

var vocab = []string{"alpha", "alps", "beta", "bet", "gamma", "delta", "del", "omega"}

type propRec struct {
	id        string
	published bool
	created   string
	data      map[string]any
}

// naiveValue returns comparable values of a field: nil when missing, else a list.
func naiveValues(r propRec, field string) []any {
	switch field {
	case "id":
		return []any{r.id}
	case "createdAt":
		return []any{r.created}
	}
	v, ok := r.data[field]
	if !ok || v == nil {
		return nil
	}
	if arr, ok := v.([]any); ok {
		return arr
	}
	return []any{v}
}

func cmpAny(a, b any) int {
	switch x := a.(type) {
	case float64:
		y := b.(float64)
		switch {
		case x < y:
			return -1
		case x > y:
			return 1
		}
		return 0
	case bool:
		y := b.(bool)
		switch {
		case x == y:
			return 0
		case !x:
			return -1
		}
		return 1
	case string:
		return strings.Compare(x, b.(string))
	}
	return 0
}

type propFilter struct {
	field, op string
	vals      []any
	raw       string
}

func (f propFilter) match(r propRec) bool {
	vs := naiveValues(r, f.field)
	anyCmp := func(pred func(int) bool) bool {
		for _, v := range vs {
			for _, w := range f.vals {
				if pred(cmpAny(v, w)) {
					return true
				}
			}
		}
		return false
	}
	if f.op == "exists" {
		return (len(vs) > 0) == (f.vals[0] == true)
	}
	eq := anyCmp(func(c int) bool { return c == 0 })
	switch f.op {
	case "eq", "in":
		return eq
	case "ne", "nin":
		return !eq
	case "gt":
		return anyCmp(func(c int) bool { return c > 0 })
	case "gte":
		return anyCmp(func(c int) bool { return c >= 0 })
	case "lt":
		return anyCmp(func(c int) bool { return c < 0 })
	case "lte":
		return anyCmp(func(c int) bool { return c <= 0 })
	case "exists":
		return (len(vs) > 0) == (f.vals[0] == true)
	}
	return false
}

func randFilter(r *rand.Rand) propFilter {
	fieldsOps := []struct {
		field string
		ops   []string
		gen   func() (any, string)
	}{
		{"n", []string{"eq", "ne", "gt", "gte", "lt", "lte", "in", "nin", "exists"}, func() (any, string) {
			v := float64(r.Intn(20) - 5)
			return v, fmt.Sprint(v)
		}},
		{"s", []string{"eq", "ne", "in", "nin", "gt", "lte", "exists"}, func() (any, string) {
			v := string(rune('a' + r.Intn(4)))
			return v, v
		}},
		{"t", []string{"eq", "ne", "in", "nin", "exists"}, func() (any, string) {
			v := string(rune('x' + r.Intn(3)))
			return v, v
		}},
		{"d", []string{"eq", "gt", "gte", "lt", "lte", "exists"}, func() (any, string) {
			day := 1 + r.Intn(9)
			return fmt.Sprintf("2026-01-%02dT00:00:00.000Z", day), fmt.Sprintf("2026-01-%02d", day)
		}},
		{"b", []string{"eq", "ne", "exists"}, func() (any, string) {
			v := r.Intn(2) == 0
			return v, fmt.Sprint(v)
		}},
		{"l", []string{"eq", "ne", "gt", "gte", "lt", "lte", "in", "nin", "exists"}, func() (any, string) {
			v := longPool[r.Intn(len(longPool))]
			if r.Intn(4) == 0 {
				v += "k" // between the pool's values
			}
			return v, v
		}},
	}
	fo := fieldsOps[r.Intn(len(fieldsOps))]
	op := fo.ops[r.Intn(len(fo.ops))]
	f := propFilter{field: fo.field, op: op}
	if op == "exists" {
		v := r.Intn(2) == 0
		f.vals = []any{v}
		f.raw = fmt.Sprintf("%s:exists:%v", f.field, v)
		return f
	}
	n := 1
	if op == "in" || op == "nin" {
		n = 1 + r.Intn(3)
	}
	var raws []string
	for i := 0; i < n; i++ {
		v, raw := fo.gen()
		f.vals = append(f.vals, v)
		raws = append(raws, raw)
	}
	f.raw = f.field + ":" + op + ":" + strings.Join(raws, ",")
	return f
}

func TestQueriesMatchNaiveEvaluation(t *testing.T) {
	for _, limit := range []int{0, 7} {
		t.Run(fmt.Sprintf("candidateLimit=%d", limit), func(t *testing.T) {
			t.Parallel()
			propertyRun(t, limit, 1+int64(limit))
		})
	}
}

func propertyRun(t *testing.T, candLimit int, seed int64) {
	ctx := context.Background()
	db, err := storetest.Open(t, store.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	svc, _ := startRecords(t, records.Options{DB: db, CandidateLimit: candLimit}, propTenants, nil)
	defer svc.Close()
	r := rand.New(rand.NewSource(seed))
	var recs []propRec
	var nd strings.Builder
	for i := 0; i < 300; i++ {
		rec := propRec{id: fmt.Sprintf("r%03d", r.Intn(1000)), published: r.Intn(5) > 0, data: map[string]any{},
			created: fmt.Sprintf("2026-02-%02dT00:00:00.000Z", 1+r.Intn(5))}
		dup := false
		for _, o := range recs {
			dup = dup || o.id == rec.id
		}
		if dup {
			continue
		}
		words := []string{}
		for j := 1 + r.Intn(3); j > 0; j-- {
			words = append(words, vocab[r.Intn(len(vocab))])
		}
		rec.data["title"] = strings.Join(words, " ")
		if r.Intn(5) > 0 {
			rec.data["n"] = float64(r.Intn(15) - 3)
		}
		if r.Intn(5) > 0 {
			rec.data["s"] = string(rune('a' + r.Intn(4)))
		}
		if r.Intn(4) > 0 {
			tags := []any{}
			for _, x := range []string{"x", "y", "z"} {
				if r.Intn(2) == 0 {
					tags = append(tags, x)
				}
			}
			rec.data["t"] = tags
		}
		if r.Intn(3) > 0 {
			rec.data["d"] = fmt.Sprintf("2026-01-%02dT00:00:00.000Z", 1+r.Intn(9))
		}
		if r.Intn(3) > 0 {
			rec.data["b"] = r.Intn(2) == 0
		}
		if r.Intn(4) > 0 {
			rec.data["l"] = longPool[r.Intn(len(longPool))]
		}
		recs = append(recs, rec)
		line := map[string]any{"id": rec.id, "published": rec.published, "data": rec.data, "createdAt": rec.created}
		b, _ := jsonMarshal(line)
		nd.Write(b)
		nd.WriteByte('\n')
	}
	rep, err := svc.Import(ctx, "p", "c", strings.NewReader(nd.String()))
	if err != nil || rep.Failed > 0 {
		t.Fatalf("Import: %+v %v", rep, err)
	}
	if err := svc.SyncTitles(ctx); err != nil {
		t.Fatal(err)
	}
	queries, nonEmpty, compound := 0, 0, 0
	defer func() {
		t.Logf("%d of %d queries had results, %d had the compound-index shape", nonEmpty, queries, compound)
	}()
	sortable := []string{"n", "s", "d", "b", "id", "createdAt", "title", "l", "l"}
	runQuery := func() {
		queries++
		var filters []propFilter
		var keys []string
		var desc []bool
		if r.Intn(3) == 0 {
			// The shape of the compound indexes: eq or in on the select s (or eq on the boolean b),
			// maybe another filter, sorted by one number, date or createdAt.
			compound++
			lead := randFilter(r)
			for !(lead.field == "s" && (lead.op == "eq" || lead.op == "in") || lead.field == "b" && lead.op == "eq") {
				lead = randFilter(r)
			}
			filters = append(filters, lead)
			if r.Intn(2) == 0 {
				filters = append(filters, randFilter(r))
			}
			if r.Intn(2) == 0 {
				// A range on a number or date (the aggregate benchmark's shape), maybe bounded twice.
				for j := 1 + r.Intn(2); j > 0; j-- {
					f := randFilter(r)
					for !(f.field == "n" || f.field == "d") || f.op == "in" || f.op == "nin" || f.op == "ne" || f.op == "exists" {
						f = randFilter(r)
					}
					filters = append(filters, f)
				}
			}
			keys = []string{[]string{"n", "d", "createdAt"}[r.Intn(3)]}
			desc = []bool{r.Intn(2) == 0}
		} else {
			for j := r.Intn(3); j > 0; j-- {
				filters = append(filters, randFilter(r))
			}
		}
		if len(keys) == 0 {
			for j := 1 + r.Intn(2); j > 0; j-- {
				k := sortable[r.Intn(len(sortable))]
				dup := false
				for _, o := range keys {
					dup = dup || o == k || o == "id"
				}
				if dup {
					continue
				}
				keys = append(keys, k)
				desc = append(desc, r.Intn(2) == 0)
			}
		}
		q := ""
		if r.Intn(4) == 0 {
			q = vocab[r.Intn(len(vocab))][:2+r.Intn(2)]
		}
		limit := 1 + r.Intn(12)
		// Naive evaluation.
		var want []string
		var matched []propRec
		for _, rec := range recs {
			ok := rec.published
			for _, f := range filters {
				ok = ok && f.match(rec)
			}
			if q != "" {
				hit := false
				for _, w := range strings.Fields(rec.data["title"].(string)) {
					hit = hit || strings.HasPrefix(w, q)
				}
				ok = ok && hit
			}
			if ok {
				matched = append(matched, rec)
			}
		}
		sort.SliceStable(matched, func(i, j int) bool {
			for k, key := range keys {
				a, b := naiveValues(matched[i], key), naiveValues(matched[j], key)
				var c int
				switch {
				case len(a) == 0 && len(b) == 0:
				case len(a) == 0:
					c = -1
				case len(b) == 0:
					c = 1
				default:
					c = cmpAny(a[0], b[0])
				}
				if desc[k] {
					c = -c
				}
				if c != 0 {
					return c < 0
				}
			}
			c := strings.Compare(matched[i].id, matched[j].id)
			if desc[0] {
				c = -c
			}
			return c < 0
		})
		for _, m := range matched {
			want = append(want, m.id)
		}
		if len(want) > 0 {
			nonEmpty++
		}
		// Paged evaluation.
		var sortParts, raws []string
		for k, key := range keys {
			if desc[k] {
				key = "-" + key
			}
			sortParts = append(sortParts, key)
		}
		for _, f := range filters {
			raws = append(raws, f.raw)
		}
		query := records.Query{Project: "p", Collection: "c", Filters: raws, Q: q, Sort: strings.Join(sortParts, ","), Limit: limit}
		var got []string
		for pages := 0; pages < 400; pages++ {
			page, err := svc.List(ctx, query)
			if err != nil {
				t.Fatalf("List(%+v): %v", query, err)
			}
			for _, it := range page.Items {
				got = append(got, string(it[len(`{"id":"`):len(`{"id":"`)+4]))
			}
			if page.Next == nil {
				break
			}
			query.After = page.Next
		}
		if !reflect.DeepEqual(got, want) && !(len(got) == 0 && len(want) == 0) {
			t.Fatalf("filters %v q=%q sort=%v limit %d:\n got %v\nwant %v", raws, q, sortParts, limit, got, want)
		}
		// The count agrees too.
		agg, err := svc.Aggregate(ctx, records.AggregateQuery{Project: "p", Collection: "c", Filters: raws, Q: q})
		if err != nil || string(agg) != fmt.Sprintf(`{"total":%d}`, len(want)) {
			t.Fatalf("Aggregate(%v, q=%q) = %s, %v; want %d", raws, q, agg, err, len(want))
		}
		// So do groupBy (array fields counted per member) and distinct over the same records.
		gfield := []string{"s", "t", "b", "n", "l"}[r.Intn(5)]
		wantGroups := map[string]int{}
		seen := map[string]any{}
		for _, m := range matched {
			for _, v := range naiveValues(m, gfield) {
				wantGroups[fmt.Sprint(v)]++
				seen[fmt.Sprint(v)] = v
			}
		}
		agg, err = svc.Aggregate(ctx, records.AggregateQuery{Project: "p", Collection: "c", Filters: raws, Q: q, GroupBy: gfield})
		var groups struct{ Groups map[string]int }
		if err != nil || json.Unmarshal(agg, &groups) != nil ||
			!reflect.DeepEqual(groups.Groups, wantGroups) && !(len(groups.Groups) == 0 && len(wantGroups) == 0) {
			t.Fatalf("Aggregate(groupBy=%s, %v, q=%q) = %s, %v; want %v", gfield, raws, q, agg, err, wantGroups)
		}
		wantValues := make([]any, 0, len(seen))
		for _, v := range seen {
			wantValues = append(wantValues, v)
		}
		sort.Slice(wantValues, func(i, j int) bool { return cmpAny(wantValues[i], wantValues[j]) < 0 })
		wantJSON, _ := json.Marshal(map[string]any{"values": wantValues})
		agg, err = svc.Aggregate(ctx, records.AggregateQuery{Project: "p", Collection: "c", Filters: raws, Q: q, Distinct: gfield})
		if err != nil || string(agg) != string(wantJSON) {
			t.Fatalf("Aggregate(distinct=%s, %v, q=%q) = %s, %v; want %s", gfield, raws, q, agg, err, wantJSON)
		}
	}
	for i := 0; i < 250; i++ {
		runQuery()
	}
	// Writes keep the per-value counters exact: unpublish, republish and delete at random, then
	// compare plain groupBy (counters) and filtered groupBy (records) with the naive counts.
	for i := 0; i < 60; i++ {
		k := r.Intn(len(recs))
		switch r.Intn(3) {
		case 0:
			recs[k].published = !recs[k].published
			if _, err := svc.SetPublished(ctx, "p", "c", recs[k].id, recs[k].published); err != nil {
				t.Fatal(err)
			}
		case 1:
			if err := svc.Delete(ctx, "p", "c", recs[k].id); err != nil {
				t.Fatal(err)
			}
			recs = append(recs[:k], recs[k+1:]...)
		default:
			recs[k].published = true
			recs[k].data["s"] = string(rune('a' + r.Intn(4)))
			recs[k].data["n"] = float64(r.Intn(15) - 3)
			recs[k].data["t"] = []any{"x"}
			recs[k].data["l"] = longPool[r.Intn(len(longPool))]
			if _, _, err := svc.Put(ctx, "p", "c", records.WriteRecord{ID: recs[k].id, Data: recs[k].data}); err != nil {
				t.Fatal(err)
			}
		}
	}
	// Queries after those writes see their index entries (compound ones too) kept in step.
	if err := svc.SyncTitles(ctx); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 150; i++ {
		runQuery()
	}
	for _, field := range []string{"s", "t", "b"} {
		want := map[string]int{}
		for _, rec := range recs {
			if !rec.published {
				continue
			}
			for _, v := range naiveValues(rec, field) {
				want[fmt.Sprint(v)]++
			}
		}
		for _, filter := range [][]string{nil, {"n:gte:-100"}} {
			agg, err := svc.Aggregate(ctx, records.AggregateQuery{Project: "p", Collection: "c", GroupBy: field, Filters: filter})
			if err != nil {
				t.Fatal(err)
			}
			var got struct{ Groups map[string]int }
			_ = json.Unmarshal(agg, &got)
			if filter != nil {
				// Only records with a number n are counted under the filter.
				want2 := map[string]int{}
				for _, rec := range recs {
					if _, has := rec.data["n"]; rec.published && has {
						for _, v := range naiveValues(rec, field) {
							want2[fmt.Sprint(v)]++
						}
					}
				}
				if !reflect.DeepEqual(got.Groups, want2) {
					t.Errorf("groupBy=%s filter %v = %v, want %v", field, filter, got.Groups, want2)
				}
				continue
			}
			if !reflect.DeepEqual(got.Groups, want) {
				t.Errorf("groupBy=%s = %v, want %v", field, got.Groups, want)
			}
		}
	}
}
