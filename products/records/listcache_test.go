package records

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/edge/edgetest/storetest"
	"github.com/gatehouse-dev/gatehouse/edge/store"
)

// The read cache keeps the walks of index and compound entries (on badger at the write
// generation): every write of a record is seen by the next list or filtered aggregate,
// whichever walk answers it.
func TestListsSeeEveryWrite(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, err := storetest.Open(t, store.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() }) // after the service's Close (cleanups run last first)
	svc, _ := newCompoundService(t, db, compoundTenants)
	put := func(id, s string, n int, published bool) {
		t.Helper()
		if _, _, err := svc.Put(ctx, "p", "c", WriteRecord{ID: id, Published: &published, Data: map[string]any{"s": s, "n": n}}); err != nil {
			t.Fatalf("Put(%s): %v", id, err)
		}
	}
	for i := 0; i < 40; i++ {
		put(fmt.Sprintf("r%02d", i), []string{"a", "b"}[i%2], i, true)
	}
	// The compound walk (s, -n), a field index walk (n) and a walk of ids, each listed twice
	// (the second answer from what the first kept) after every write.
	queries := []Query{
		{Filters: []string{"s:eq:a", "n:gte:10"}, Sort: "-n", Limit: 3},
		{Filters: []string{"n:lte:35"}, Sort: "-n", Limit: 3},
		{Filters: []string{"s:eq:b"}, Sort: "n", Limit: 3},
	}
	list := func(q Query) string {
		t.Helper()
		q.Project, q.Collection = "p", "c"
		page, err := svc.List(ctx, q)
		if err != nil {
			t.Fatalf("List(%v): %v", q.Filters, err)
		}
		var ids []string
		for _, it := range page.Items {
			_, rest, _ := strings.Cut(string(it), `"id":"`)
			id, _, _ := strings.Cut(rest, `"`)
			ids = append(ids, id)
		}
		return strings.Join(ids, ",")
	}
	steps := []struct {
		name  string
		write func()
		want  []string
	}{
		{"start", func() {}, []string{"r38,r36,r34", "r35,r34,r33", "r01,r03,r05"}},
		{"create on top", func() { put("new", "a", 100, true) }, []string{"new,r38,r36", "r35,r34,r33", "r01,r03,r05"}},
		{"replace: moves down and to b", func() { put("new", "b", 0, true) }, []string{"r38,r36,r34", "r35,r34,r33", "new,r01,r03"}},
		{"unpublish", func() {
			if _, err := svc.SetPublished(ctx, "p", "c", "r38", false); err != nil {
				t.Fatal(err)
			}
		}, []string{"r36,r34,r32", "r35,r34,r33", "new,r01,r03"}},
		{"delete", func() {
			if err := svc.Delete(ctx, "p", "c", "r35"); err != nil {
				t.Fatal(err)
			}
		}, []string{"r36,r34,r32", "r34,r33,r32", "new,r01,r03"}},
		{"import", func() {
			rep, err := svc.Import(ctx, "p", "c", strings.NewReader(`{"id":"imp","published":true,"data":{"s":"a","n":37}}`+"\n"))
			if err != nil || rep.Imported != 1 {
				t.Fatalf("Import = %+v, %v", rep, err)
			}
		}, []string{"imp,r36,r34", "r34,r33,r32", "new,r01,r03"}},
	}
	// A filtered aggregate walks the compound index through the same cache.
	totals := []int{15, 16, 15, 14, 14, 15}
	for si, st := range steps {
		st.write()
		for round := 0; round < 2; round++ {
			got, err := svc.Aggregate(ctx, AggregateQuery{Project: "p", Collection: "c", Filters: []string{"s:eq:a", "n:gte:10"}})
			if want := fmt.Sprintf(`{"total":%d}`, totals[si]); err != nil || string(got) != want {
				t.Errorf("%s: Aggregate(s:eq:a, n:gte:10) round %d = %s, %v, want %s", st.name, round, got, err, want)
			}
		}
		for i, q := range queries {
			for round := 0; round < 2; round++ {
				if got := list(q); got != st.want[i] {
					t.Errorf("%s: List(%v, sort %s) round %d = %s, want %s", st.name, q.Filters, q.Sort, round, got, st.want[i])
				}
			}
		}
	}
}
