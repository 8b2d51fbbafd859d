package journal_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/gatehouse-dev/gatehouse/edge/journal"
	"github.com/gatehouse-dev/gatehouse/edge/store"
)

// Record without a journal writes nothing; with one, it marks every change with the generation
// the journal gave, and a journal's error is Record's; Notify hands the changes to every
// listener in registration order.
func TestFeedRecordsAndNotifies(t *testing.T) {
	t.Parallel()
	var f journal.Feed
	changes := []journal.Change{{Op: "created", Kind: "form", Project: "demo", Name: "contact"}}
	if err := f.Record(nil, changes); err != nil || changes[0].Gen != 0 {
		t.Fatalf("Record without a journal = %v, Gen %d; want nil, 0", err, changes[0].Gen)
	}
	f.SetJournal(func(_ *store.Txn, cs []journal.Change) (uint64, error) { return 7, nil })
	if err := f.Record(nil, changes); err != nil || changes[0].Gen != 7 {
		t.Fatalf("Record = %v, Gen %d; want nil, 7", err, changes[0].Gen)
	}
	refused := errors.New("refused")
	f.SetJournal(func(*store.Txn, []journal.Change) (uint64, error) { return 0, refused })
	if err := f.Record(nil, changes); !errors.Is(err, refused) {
		t.Fatalf("Record with a failing journal = %v, want its error", err)
	}
	var heard []string
	f.OnChange(func(_ context.Context, cs []journal.Change) { heard = append(heard, "first "+cs[0].Path()) })
	f.OnChange(func(_ context.Context, cs []journal.Change) { heard = append(heard, "second "+cs[0].Path()) })
	f.Notify(context.Background(), changes)
	if len(heard) != 2 || heard[0] != "first demo/contact" || heard[1] != "second demo/contact" {
		t.Errorf("listeners heard %q", heard)
	}
}

// A change renders as the apply report shows it: op, kind and the path of its names.
func TestChangeReport(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   journal.Change
		want string
	}{
		{journal.Change{Op: "created", Kind: "org", Org: "acme"}, `{"op":"created","kind":"org","path":"acme"}`},
		{journal.Change{Op: "updated", Kind: "record", Project: "demo", Name: "posts/post-1", New: []byte(`{}`)}, `{"op":"updated","kind":"record","path":"demo/posts/post-1"}`},
		{journal.Change{Op: "deleted", Kind: "key", Org: "acme", Project: "demo", Name: "web"}, `{"op":"deleted","kind":"key","path":"acme/demo/web"}`},
	} {
		got, err := json.Marshal(tc.in)
		if err != nil || string(got) != tc.want {
			t.Errorf("json.Marshal(%+v) = %s, %v; want %s", tc.in, got, err, tc.want)
		}
	}
}
