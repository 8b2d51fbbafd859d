package records_test

import (
	"context"
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
