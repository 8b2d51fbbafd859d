package records_test

import (
	"context"
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/edge/edgetest"
	"github.com/gatehouse-dev/gatehouse/index/title"
	"github.com/gatehouse-dev/gatehouse/products/records"
)

// newServiceOver starts a second service over the harness's store with an empty title index,
// as after losing the index: Start must rebuild it.
func newServiceOver(t *testing.T, h *edgetest.Harness) *records.Service {
	t.Helper()
	titles, err := title.Open(t.TempDir() + "/title.bleve")
	if err != nil {
		t.Fatal(err)
	}
	return startOver(t, h, titles)
}

// startOver starts a second service over the harness's store with the title index titles; the
// service is closed at t's cleanup.
func startOver(t *testing.T, h *edgetest.Harness, titles *title.Index) *records.Service {
	t.Helper()
	svc, err := records.NewService(records.Options{DB: h.DB, Tenancy: h.Tenancy, Titles: titles})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = svc.Close() })
	if err := svc.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	return svc
}

// TestCollectionTasksSurviveACrash: the re-derivation of a collection whose fields changed and
// the drop of a deleted collection are recorded in the apply's transaction and run after the
// commit; when the process dies before they ran, the next Start runs them.
func TestCollectionTasksSurviveACrash(t *testing.T) {
	t.Parallel()
	h, svc := newHarness(t)
	ctx := context.Background()
	// posts' internalNote becomes public; internal is deleted; then the process "dies".
	def := records.Collection{Name: "posts", Public: true, Fields: []records.CollectionField{
		{Name: "title", Type: "text"}, {Name: "category", Type: "select", Options: []string{"news", "guides", "reviews"}},
		{Name: "tags", Type: "multiselect", Options: []string{"go", "wasm", "edge"}}, {Name: "views", Type: "number"},
		{Name: "day", Type: "date"}, {Name: "author", Type: "relation", Collection: "authors"},
		{Name: "related", Type: "relations", Collection: "posts"}, {Name: "internalNote", Type: "text"},
	}}
	if err := records.CrashAfterApplyForTest(svc, "demo", "posts", &def); err != nil {
		t.Fatal(err)
	}
	if err := records.CrashAfterApplyForTest(svc, "demo", "internal", nil); err != nil {
		t.Fatal(err)
	}
	if recs, _, tasks, err := records.StoredForTest(svc, "demo", "internal"); err != nil || recs != 1 || tasks != 2 {
		t.Fatalf("before the restart: %d records of internal, %d tasks, %v; want 1 and 2", recs, tasks, err)
	}
	fresh := newServiceOver(t, h)
	recs, idx, tasks, err := records.StoredForTest(fresh, "demo", "internal")
	if err != nil || recs != 0 || idx != 0 || tasks != 0 {
		t.Errorf("after Start: internal holds %d records, %d index entries, %d tasks remain (%v); want none", recs, idx, tasks, err)
	}
	page, err := fresh.List(ctx, records.Query{Project: "demo", Collection: "posts", Filters: []string{"internalNote:eq:secret-3"}})
	if err != nil || len(page.Items) != 1 || !strings.Contains(string(page.Items[0]), `"internalNote":"secret-3"`) {
		t.Errorf("after Start: public filter on the newly public field = %d items %q, %v; want post-3 with its note", len(page.Items), page.Items, err)
	}
}
