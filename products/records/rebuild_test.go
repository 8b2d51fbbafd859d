package records_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/products/records"
)

// TestRebuildKeepsConcurrentWrites: a record replaced or deleted while a collection rebuild
// runs (after the rebuild read the record's id, before it rebuilt the record) keeps that write;
// the rebuild does not put back the version it walked past.
func TestRebuildKeepsConcurrentWrites(t *testing.T) {
	t.Parallel()
	_, svc := newHarness(t)
	ctx := context.Background()
	for _, id := range []string{"rb-1", "rb-2"} {
		if _, _, err := svc.Put(ctx, "demo", "posts", records.WriteRecord{ID: id, Data: map[string]any{"title": "before " + id}}); err != nil {
			t.Fatal(err)
		}
	}
	once := false
	err := records.RebuildForTest(svc, "demo", "posts", func() {
		if once {
			return
		}
		once = true
		if _, _, err := svc.Put(ctx, "demo", "posts", records.WriteRecord{ID: "rb-1", Data: map[string]any{"title": "written during the rebuild"}}); err != nil {
			t.Error(err)
		}
		if err := svc.Delete(ctx, "demo", "posts", "rb-2"); err != nil {
			t.Error(err)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if !once {
		t.Fatal("the rebuild read no chunk")
	}
	got, err := svc.Get(ctx, "demo", "posts", "rb-1", true, "", "")
	if err != nil || !strings.Contains(string(got), `"title":"written during the rebuild"`) {
		t.Errorf("rb-1 after the rebuild = %s, %v; want the write made during it", got, err)
	}
	if got, err := svc.Get(ctx, "demo", "posts", "rb-2", true, "", ""); err == nil {
		t.Errorf("rb-2 after the rebuild = %s; want it deleted", got)
	}
}

// TestRebuildCountsConcurrentWrites: writes made while a collection rebuild runs, to records
// the rebuild has already re-derived and to records it has yet to reach, leave the counters
// and index entries exact: a record created before the rebuild reaches it is counted once, one
// deleted before it is reached not at all.
func TestRebuildCountsConcurrentWrites(t *testing.T) {
	t.Parallel()
	_, svc := newHarness(t)
	ctx := context.Background()
	// 600 records before the demo posts: the first chunk of the rebuild (500) ends among them.
	for i := range 600 {
		in := records.WriteRecord{ID: fmt.Sprintf("bulk-%03d", i), Data: map[string]any{"title": "bulk", "category": "reviews"}}
		if _, _, err := svc.Put(ctx, "demo", "posts", in); err != nil {
			t.Fatal(err)
		}
	}
	chunks := 0
	err := records.RebuildForTest(svc, "demo", "posts", func() {
		chunks++
		if chunks != 2 {
			return
		}
		writes := []func() error{
			func() error { return svc.Delete(ctx, "demo", "posts", "bulk-010") }, // re-derived already
			func() error { return putCategory(svc, "bulk-020", "guides") },       // re-derived already
			func() error { return putCategory(svc, "zz-new", "news") },           // not reached yet
			func() error { return svc.Delete(ctx, "demo", "posts", "post-5") },   // not reached yet
			func() error { return putCategory(svc, "post-4", "guides") },         // not reached yet
		}
		for _, w := range writes {
			if err := w(); err != nil {
				t.Error(err)
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if chunks < 2 {
		t.Fatalf("the rebuild ran %d chunks, want 2", chunks)
	}
	// Published: post-1..5 and 600 bulk records, less bulk-010 and post-5, plus zz-new.
	for _, c := range []struct {
		q    records.AggregateQuery
		want string
	}{
		{records.AggregateQuery{}, `{"total":604}`},
		{records.AggregateQuery{GroupBy: "category"}, `{"groups":{"guides":4,"news":2,"reviews":598}}`},
		{records.AggregateQuery{Filters: []string{"category:in:news"}}, `{"total":2}`},
		{records.AggregateQuery{Filters: []string{"category:in:guides"}}, `{"total":4}`},
	} {
		c.q.Project, c.q.Collection = "demo", "posts"
		got, err := svc.Aggregate(ctx, c.q)
		if err != nil || string(got) != c.want {
			t.Errorf("Aggregate(%+v) = %s, %v; want %s", c.q, got, err, c.want)
		}
	}
}

// putCategory writes record id of demo/posts, published, in category.
func putCategory(svc *records.Service, id, category string) error {
	_, _, err := svc.Put(context.Background(), "demo", "posts", records.WriteRecord{ID: id, Data: map[string]any{"title": "written during the rebuild", "category": category}})
	return err
}
