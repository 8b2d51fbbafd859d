package records_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/edge/apierr"
	"github.com/gatehouse-dev/gatehouse/edge/cursor"
	"github.com/gatehouse-dev/gatehouse/edge/edgetest/storetest"
	"github.com/gatehouse-dev/gatehouse/edge/store"
	"github.com/gatehouse-dev/gatehouse/edge/tenancy"
	"github.com/gatehouse-dev/gatehouse/products/records"
)

const longTenants = `
orgs:
  - slug: o
    projects:
      - id: p
        collections:
          - name: c
            public: true
            fields:
              - {name: title, type: text}
              - {name: body, type: text}
              - {name: rel, type: relation, collection: c}
`

// Values far longer than a key can hold (store.MaxKeyLen) are written, filtered, sorted and
// paged alike on every backend (GATEHOUSE_TEST_STORE); a rewrite drops their index entries.
// What would go whole into a key is bounded instead, with VALIDATION_FAILED: relation values
// are record ids, options at most 256 bytes.
func TestLongValues(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, err := storetest.Open(t, store.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	svc, ten := startRecords(t, records.Options{DB: db}, longTenants, nil)
	defer svc.Close()
	cursors, err := cursor.NewCursors([]byte("0123456789abcdef0123456789abcdef"))
	if err != nil {
		t.Fatal(err)
	}
	prefix := strings.Repeat("p", 5000)
	bodies := map[string]string{
		"r1": prefix + strings.Repeat("b", 200_000),
		"r2": prefix + "a",
		"r3": prefix + strings.Repeat("c", 3000),
		"r4": "short", // sorts after the p... of the others
	}
	for id, body := range bodies {
		if _, _, err := svc.Put(ctx, "p", "c", records.WriteRecord{ID: id, Data: map[string]any{"body": body}}); err != nil {
			t.Fatalf("Put(%s, a %d-byte body): %v", id, len(body), err)
		}
	}
	list := func(q records.Query) []string {
		t.Helper()
		q.Project, q.Collection, q.Limit = "p", "c", 1
		var ids []string
		for {
			page, err := svc.List(ctx, q)
			if err != nil {
				t.Fatalf("List(%v, sort %s): %v", len(q.Filters), q.Sort, err)
			}
			for _, it := range page.Items {
				ids = append(ids, string(it[len(`{"id":"`):len(`{"id":"`)+2]))
			}
			if page.Next == nil {
				return ids
			}
			if n := len(cursors.Encode("records\x00p\x00c", page.Next)); n > 1024 {
				t.Fatalf("a cursor of %d characters", n)
			}
			q.After = page.Next
		}
	}
	for _, tc := range []struct {
		q    records.Query
		want string
	}{
		{records.Query{Sort: "body"}, "r2 r1 r3 r4"},
		{records.Query{Sort: "-body"}, "r4 r3 r1 r2"},
		{records.Query{Filters: []string{"body:eq:" + bodies["r1"]}}, "r1"},
		{records.Query{Filters: []string{"body:gt:" + bodies["r2"]}, Sort: "body"}, "r1 r3 r4"},
		{records.Query{Filters: []string{"body:lte:" + bodies["r1"]}, Sort: "-body"}, "r1 r2"},
		{records.Query{Filters: []string{"body:in:" + bodies["r3"] + "," + bodies["r4"]}, Sort: "id"}, "r3 r4"},
	} {
		if got := strings.Join(list(tc.q), " "); got != tc.want {
			t.Errorf("List(%d filters, sort %q) = %s, want %s", len(tc.q.Filters), tc.q.Sort, got, tc.want)
		}
	}
	if _, _, err := svc.Put(ctx, "p", "c", records.WriteRecord{ID: "r1", Data: map[string]any{"body": "now short"}}); err != nil {
		t.Fatal(err)
	}
	if got := list(records.Query{Filters: []string{"body:eq:" + bodies["r1"]}}); len(got) != 0 {
		t.Errorf("after the rewrite, the old long value still selects %v", got)
	}
	if got := strings.Join(list(records.Query{Sort: "body"}), " "); got != "r1 r2 r3 r4" {
		t.Errorf("after the rewrite, sort body = %s", got)
	}
	// A cursor names its page's last record by a long value's prefix and digest: when that
	// record's value changes before the next page, the next page starts at the first value of
	// that prefix (records may repeat, none is skipped).
	first, err := svc.List(ctx, records.Query{Project: "p", Collection: "c", Sort: "body", Limit: 2})
	if err != nil || len(first.Items) != 2 || !strings.HasPrefix(string(first.Items[1]), `{"id":"r2"`) {
		t.Fatalf("first page = %d items, %v; want r1 r2", len(first.Items), err)
	}
	if _, _, err := svc.Put(ctx, "p", "c", records.WriteRecord{ID: "r2", Data: map[string]any{"body": prefix + "z"}}); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(list(records.Query{Sort: "body", After: first.Next}), " "); got != "r3 r2 r4" {
		t.Errorf("after the cursor's record changed, the next pages = %s, want r3 r2 r4", got)
	}
	_, _, err = svc.Put(ctx, "p", "c", records.WriteRecord{ID: "r5", Data: map[string]any{"rel": strings.Repeat("r", 3000)}})
	var ae *apierr.Error
	if !errors.As(err, &ae) || ae.Code != "VALIDATION_FAILED" {
		t.Errorf("Put of a 3,000-byte relation value = %v, want VALIDATION_FAILED", err)
	}
	bad, err := tenancy.Parse([]byte(strings.Replace(longTenants, "{name: title, type: text}",
		"{name: kind, type: select, options: [a, "+strings.Repeat("o", 257)+"]}", 1)))
	if err == nil {
		_, err = ten.Apply(ctx, bad)
	}
	var inv *tenancy.InvalidError
	if !errors.As(err, &inv) || !strings.Contains(inv.Error(), "options[1]") {
		t.Errorf("Apply of a 257-byte option = %v, want a problem at options[1]", err)
	}
}

// A record body as large as the server's body limit (12 MB) is stored and read back whole, then
// replaced: its copies in one write go to the store's value log, not into one commit's
// bound (before, a 1 MB body made a 3 MB commit and failed with 500 INTERNAL).
func TestLargeRecordBodies(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, err := storetest.Open(t, store.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	svc, _ := startRecords(t, records.Options{DB: db}, longTenants, nil)
	defer svc.Close()
	for _, n := range []int{1 << 20, 12 << 20, 3 << 20} {
		body := strings.Repeat("x", n)
		if _, _, err := svc.Put(ctx, "p", "c", records.WriteRecord{ID: "big", Data: map[string]any{"body": body}}); err != nil {
			t.Fatalf("Put of a %d-byte body: %v", n, err)
		}
		raw, err := svc.Get(ctx, "p", "c", "big", true, "", "")
		if err != nil {
			t.Fatal(err)
		}
		var got struct{ Body string }
		if err := json.Unmarshal(raw, &got); err != nil {
			t.Fatal(err)
		}
		if s := got.Body; len(s) != n {
			t.Errorf("read back a %d-byte body, want %d", len(s), n)
		}
	}
}
