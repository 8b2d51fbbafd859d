package records

import (
	"context"
	"errors"
	"testing"

	"github.com/gatehouse-dev/gatehouse/index/title"
)

const healthTenants = `
orgs:
  - slug: o
    projects:
      - id: p
        collections:
          - name: c
            public: true
            fields:
              - {name: title, type: text}
`

// TestHealthyFollowsTheTitleIndex: the service is healthy once started, reports
// ErrTitlesFailing while the title journal cannot be drained into the index (here: a closed
// index stands in for it, and a write journals a title), for /readyz to answer 503, and is
// healthy again once a drain succeeds.
func TestHealthyFollowsTheTitleIndex(t *testing.T) {
	ctx := context.Background()
	svc, _, _ := openCompoundService(t, healthTenants)
	if err := svc.Healthy(); err != nil {
		t.Fatalf("Healthy() after Start = %v", err)
	}
	if _, _, err := svc.Put(ctx, "p", "c", WriteRecord{ID: "r1", Data: map[string]any{"title": "Indexed quokka"}}); err != nil {
		t.Fatal(err)
	}
	if err := svc.SyncTitles(ctx); err != nil {
		t.Fatal(err)
	}
	if err := svc.Healthy(); err != nil {
		t.Fatalf("Healthy() after an indexed write = %v", err)
	}
	// The index is swapped for a closed one (under the lock the drains hold), and back.
	broken, err := title.OpenMemory()
	if err != nil {
		t.Fatal(err)
	}
	if err := broken.Close(); err != nil {
		t.Fatal(err)
	}
	swap := func(x *title.Index) *title.Index {
		svc.titleMu.Lock()
		defer svc.titleMu.Unlock()
		old := svc.titles
		svc.titles = x
		return old
	}
	good := swap(broken)
	restored := false
	t.Cleanup(func() {
		if !restored {
			swap(good) // Close closes the service's own index
		}
	})
	if _, _, err := svc.Put(ctx, "p", "c", WriteRecord{ID: "r2", Data: map[string]any{"title": "Unindexed ibex"}}); err != nil {
		t.Fatal(err)
	}
	if err := svc.SyncTitles(ctx); err == nil {
		t.Fatal("SyncTitles over a closed index = nil, want its error")
	}
	if err := svc.Healthy(); !errors.Is(err, ErrTitlesFailing) {
		t.Errorf("Healthy() while the index refuses the journal = %v, want ErrTitlesFailing", err)
	}
	swap(good)
	restored = true
	if err := svc.SyncTitles(ctx); err != nil {
		t.Fatal(err)
	}
	if err := svc.Healthy(); err != nil {
		t.Errorf("Healthy() once the index takes the journal again = %v", err)
	}
}
