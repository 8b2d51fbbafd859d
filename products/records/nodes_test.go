package records_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/edge/edgetest/storetest"
	"github.com/gatehouse-dev/gatehouse/edge/store"
	"github.com/gatehouse-dev/gatehouse/index/title"
	"github.com/gatehouse-dev/gatehouse/products/records"
)

// recNode is one gateway's records product over a shared store: its own tenancy service,
// title index folder and records service.
type recNode struct {
	svc  *records.Service
	dir  string
	once sync.Once
}

// openNode starts a records service over db with its title index in dir. apply applies the
// test tenants through it (once per store); clock, when set, is its journal clock.
func openNode(t *testing.T, db *store.DB, dir string, apply bool, clock func() time.Time, retention time.Duration) *recNode {
	t.Helper()
	titles, err := title.Open(filepath.Join(dir, "title.bleve"))
	if err != nil {
		t.Fatal(err)
	}
	doc := ""
	if apply {
		doc = tenants
	}
	var prepare func(*records.Service)
	if clock != nil {
		prepare = func(svc *records.Service) { records.SetJournalClockForTest(svc, clock) }
	}
	svc, _ := startRecords(t, records.Options{DB: db, Titles: titles, Shared: true, JournalRetention: retention}, doc, prepare)
	n := &recNode{svc: svc, dir: dir}
	t.Cleanup(n.close)
	return n
}

func (n *recNode) close() { n.once.Do(func() { _ = n.svc.Close() }) }

// search returns the ids q finds in posts through n.
func (n *recNode) search(t *testing.T, q string) []string {
	t.Helper()
	p, err := n.svc.List(context.Background(), records.Query{Project: "demo", Collection: "posts", Q: q, Limit: 50})
	if err != nil {
		t.Fatalf("List(q=%s): %v", q, err)
	}
	var ids []string
	for _, it := range p.Items {
		var r struct{ ID string }
		_ = json.Unmarshal(it, &r)
		ids = append(ids, r.ID)
	}
	return ids
}

// awaitSearch waits until q finds exactly want through n (the title worker polls the journal)
// and returns how long that took.
func (n *recNode) awaitSearch(t *testing.T, q string, want ...string) time.Duration {
	t.Helper()
	start := time.Now()
	deadline := start.Add(20 * time.Second)
	for {
		got := n.search(t, q)
		if strings.Join(got, ",") == strings.Join(want, ",") {
			return time.Since(start)
		}
		if time.Now().After(deadline) {
			t.Fatalf("q=%s finds %v, want %v", q, got, want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func put(t *testing.T, n *recNode, id, title string) {
	t.Helper()
	if _, _, err := n.svc.Put(context.Background(), "demo", "posts", records.WriteRecord{ID: id, Data: map[string]any{"title": title, "category": "news"}}); err != nil {
		t.Fatalf("Put(%s): %v", id, err)
	}
}

// titleOf reads a post through n and returns its title.
func titleOf(t *testing.T, n *recNode, id string) string {
	t.Helper()
	raw, err := n.svc.Get(context.Background(), "demo", "posts", id, false, "", "")
	if err != nil {
		t.Fatalf("Get(%s): %v", id, err)
	}
	var r struct{ Title string }
	_ = json.Unmarshal(raw, &r)
	return r.Title
}

// Two nodes share one store, each with its own title index: what one writes, the other reads
// at once and finds by q (within the title worker's poll); after a restart of the second its
// index resumes from its mark, and after an absence longer than the journal's retention it is
// rebuilt (a deletion whose journal entry was pruned is not found any more).
func TestNodesFollowTheJournal(t *testing.T) {
	for _, b := range storetest.Backends() {
		t.Run(b, func(t *testing.T) {
			db := storetest.OpenBackend(t, b)
			var skew atomic.Int64 // the journal clock's advance, for the retention case
			clock := func() time.Time { return time.Now().Add(time.Duration(skew.Load())) }
			a := openNode(t, db, t.TempDir(), true, clock, time.Hour)
			bn := openNode(t, db, t.TempDir(), false, clock, time.Hour)

			// Reads: a record cached by b is read fresh once a changed it.
			if got := titleOf(t, bn, "post-1"); got != "Hello world" {
				t.Fatalf("b reads post-1 as %q", got)
			}
			put(t, a, "post-1", "Hello changed")
			if got := titleOf(t, bn, "post-1"); got != "Hello changed" {
				t.Errorf("b reads post-1 as %q after a changed it, want Hello changed", got)
			}

			// Titles written on either node are found on the other.
			put(t, a, "x-1", "Zebra crossing")
			ab := bn.awaitSearch(t, "zebra", "x-1")
			put(t, bn, "x-2", "Zebra stripes")
			ba := a.awaitSearch(t, "zebra", "x-1", "x-2")
			// a's follower remembers the entry it just indexed (/metrics: journal_follower).
			if n := a.svc.FollowerEntries(); n < 1 {
				t.Errorf("a's follower remembers %d entries after indexing b's write", n)
			}
			t.Logf("a write found by q on the other node after %v (a to b) and %v (b to a)", ab.Round(time.Millisecond), ba.Round(time.Millisecond))
			bn.awaitSearch(t, "changed", "post-1")

			// b restarts; a writes meanwhile: b's index resumes from its mark.
			bn.close()
			put(t, a, "x-3", "Zebra herd")
			if err := a.svc.Delete(context.Background(), "demo", "posts", "x-2"); err != nil {
				t.Fatal(err)
			}
			bn = openNode(t, db, bn.dir, false, clock, time.Hour)
			bn.awaitSearch(t, "zebra", "x-1", "x-3")

			// b is away longer than the retention; the journal entries of a deletion made
			// meanwhile are pruned: b rebuilds its index at start.
			bn.close()
			if err := a.svc.Delete(context.Background(), "demo", "posts", "x-3"); err != nil {
				t.Fatal(err)
			}
			skew.Store(int64(2 * time.Hour))
			if err := records.PruneJournalForTest(a.svc); err != nil {
				t.Fatal(err)
			}
			bn = openNode(t, db, bn.dir, false, clock, time.Hour)
			if got := bn.search(t, "zebra"); len(got) != 1 || got[0] != "x-1" {
				t.Errorf("after a rebuild q=zebra finds %v on b, want [x-1]", got)
			}
		})
	}
}

// list returns the ids of a filtered, sorted list of posts through n, and its next cursor.
func (n *recNode) list(t *testing.T, filters ...string) string {
	t.Helper()
	p, err := n.svc.List(context.Background(), records.Query{Project: "demo", Collection: "posts", Filters: filters, Sort: "-views", Limit: 3})
	if err != nil {
		t.Fatalf("List(%v): %v", filters, err)
	}
	var ids []string
	for _, it := range p.Items {
		var r struct {
			ID    string
			Title string
		}
		_ = json.Unmarshal(it, &r)
		ids = append(ids, r.ID+":"+r.Title)
	}
	return strings.Join(ids, ",")
}

// A node's lists and record reads, served from its read cache on a shared store, follow every
// write another node commits before them (the collection's version is read first): creates,
// changes, unpublishing and deletes, with no wait.
func TestNodesListOthersWritesAtOnce(t *testing.T) {
	for _, b := range storetest.Backends() {
		t.Run(b, func(t *testing.T) {
			db := storetest.OpenBackend(t, b)
			a := openNode(t, db, t.TempDir(), true, nil, time.Hour)
			bn := openNode(t, db, t.TempDir(), false, nil, time.Hour)
			ctx := context.Background()
			steps := []struct {
				name  string
				write func() error
				list  string
			}{
				{"start", func() error { return nil }, "post-4:Reviewing edge gateways,post-5:Hello again,post-1:Hello world"},
				{"create", func() error {
					_, _, err := a.svc.Put(ctx, "demo", "posts", records.WriteRecord{ID: "n-1", Data: map[string]any{"title": "New", "category": "news", "views": 50}})
					return err
				}, "n-1:New,post-4:Reviewing edge gateways,post-5:Hello again"},
				{"change", func() error {
					_, _, err := a.svc.Put(ctx, "demo", "posts", records.WriteRecord{ID: "post-5", Data: map[string]any{"title": "Hello changed", "category": "reviews", "views": 60}})
					return err
				}, "post-5:Hello changed,n-1:New,post-4:Reviewing edge gateways"},
				{"unpublish", func() error {
					_, err := a.svc.SetPublished(ctx, "demo", "posts", "n-1", false)
					return err
				}, "post-5:Hello changed,post-4:Reviewing edge gateways,post-1:Hello world"},
				{"delete", func() error { return a.svc.Delete(ctx, "demo", "posts", "post-4") }, "post-5:Hello changed,post-1:Hello world"},
			}
			for _, st := range steps {
				if err := st.write(); err != nil {
					t.Fatalf("%s: %v", st.name, err)
				}
				for i := 0; i < 2; i++ { // the second read is served from the cache
					if got := bn.list(t, "views:lt:100", "category:in:news,reviews"); got != st.list {
						t.Errorf("after %s, read %d: b lists %s, want %s", st.name, i+1, got, st.list)
					}
				}
				if got := titleOf(t, bn, "post-5"); st.name != "start" && st.name != "create" && got != "Hello changed" {
					t.Errorf("after %s: b reads post-5 as %q, want Hello changed", st.name, got)
				}
			}
			if _, err := bn.svc.Get(ctx, "demo", "posts", "post-4", false, "", ""); err == nil {
				t.Errorf("b reads post-4 after a deleted it")
			}
		})
	}
}
