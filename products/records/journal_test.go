package records_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/gatehouse-dev/gatehouse/edge/edgetest"
	"github.com/gatehouse-dev/gatehouse/edge/store"
	"github.com/gatehouse-dev/gatehouse/index/title"
	"github.com/gatehouse-dev/gatehouse/products/records"
)

// restartOver starts a second service over the harness's store, as the process restarted after
// a crash, with a complete title index that holds none of the batches the first one indexed
// (what a crash leaves of batches the index had not made durable): Start indexes the journal
// into it without a rebuild.
func restartOver(t *testing.T, h *edgetest.Harness) *records.Service {
	t.Helper()
	x, err := title.Open(t.TempDir() + "/title.bleve")
	if err != nil {
		t.Fatal(err)
	}
	if err := x.MarkComplete(); err != nil {
		t.Fatal(err)
	}
	x.Fresh = false
	return startOver(t, h, x)
}

// searchAll returns the ids q finds in demo/posts through svc, every page, sorted.
func searchAll(t *testing.T, svc *records.Service, q string) []string {
	t.Helper()
	var out []string
	var after []byte
	for {
		page, err := svc.List(context.Background(), records.Query{Project: "demo", Collection: "posts", Q: q, Limit: 100, After: after})
		if err != nil {
			t.Fatalf("List(q=%s) = %v", q, err)
		}
		for _, it := range page.Items {
			var r struct{ ID string }
			if err := json.Unmarshal(it, &r); err != nil {
				t.Fatal(err)
			}
			out = append(out, r.ID)
		}
		if page.Next == nil {
			slices.Sort(out)
			return out
		}
		after = page.Next
	}
}

// TestJournalKeptUntilTitlesDurable: a journal entry leaves the journal only once the title
// index reports its batch durable. While the index holds its durability reports back, drains
// index the writes (q finds them) but trim none of their entries, so a process that dies then,
// its index without those batches, finds every acknowledged write by q after the restart; once
// the reports arrive the journal is trimmed.
func TestJournalKeptUntilTitlesDurable(t *testing.T) {
	t.Parallel()
	h, svc := newHarness(t, func(o *records.Options) {
		_ = o.Titles.Close()
		x, err := title.Open(t.TempDir() + "/title.bleve")
		if err != nil {
			t.Fatal(err)
		}
		o.Titles = x
	})
	if h.DB.Backend() == store.BackendPostgres {
		t.Skip("a shared store's journal is pruned by age, never trimmed by a node (TestNodesFollowTheJournal)")
	}
	ctx := context.Background()
	release := records.HoldTitleDurabilityForTest(svc)
	var (
		mu    sync.Mutex
		acked []string
	)
	for round := range 4 {
		var wg sync.WaitGroup
		for i := range 25 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				id := fmt.Sprintf("held-%d-%02d", round, i)
				if _, _, err := svc.Put(ctx, "demo", "posts", records.WriteRecord{ID: id, Data: map[string]any{"title": "Held lynx " + id}}); err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				acked = append(acked, id)
				mu.Unlock()
			}()
		}
		wg.Wait()
		// Each drain first trims what the index reported durable: nothing, while held.
		if err := svc.SyncTitles(ctx); err != nil {
			t.Fatal(err)
		}
	}
	slices.Sort(acked)
	if got := searchAll(t, svc, "lynx"); !reflect.DeepEqual(got, acked) {
		t.Fatalf("before the crash q=lynx finds %d records, want the %d acknowledged", len(got), len(acked))
	}
	// The process dies here; the restarted one has an index without the held batches.
	fresh := restartOver(t, h)
	if got := searchAll(t, fresh, "lynx"); !reflect.DeepEqual(got, acked) {
		t.Errorf("after the restart q=lynx finds %d of the %d acknowledged records: journal entries were trimmed before the index held them durably\n got %v", len(got), len(acked), got)
	}

	// Once the reports arrive, the drains trim the journal (Stop drains and syncs the index).
	release()
	for _, s := range []*records.Service{svc, fresh} {
		if err := s.Stop(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if keys, _, err := records.JournalForTest(svc); err != nil || len(keys) != 0 {
		t.Errorf("after the durability reports and Stop the journal holds %d entries (%v), want none", len(keys), err)
	}
}

// TestJournalEntriesOfEarlierVersions: a store written by a version whose journal entries
// named the record only (and the createdAt of the version replaced) drains as before: the
// drain reads each record, both at start and in the running service.
func TestJournalEntriesOfEarlierVersions(t *testing.T) {
	t.Parallel()
	h, svc := newHarness(t)
	ctx := context.Background()
	// No worker: it would drain the entries before they are rewritten.
	if err := svc.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	put := func(id, title, created string) {
		t.Helper()
		if _, _, err := svc.Put(ctx, "demo", "posts", records.WriteRecord{ID: id, CreatedAt: created, Data: map[string]any{"title": title}}); err != nil {
			t.Fatal(err)
		}
	}
	put("legacy-1", "Legacy quokka", "")
	put("legacy-2", "Legacy quokka two", "")
	if err := svc.Delete(ctx, "demo", "posts", "legacy-2"); err != nil {
		t.Fatal(err)
	}
	put("legacy-3", "Legacy quokka three", "2025-01-01T00:00:00Z")
	put("legacy-3", "Moved quokka", "2020-06-01T00:00:00Z")
	unpub := false
	if _, _, err := svc.Put(ctx, "demo", "posts", records.WriteRecord{ID: "legacy-4", Published: &unpub, Data: map[string]any{"title": "Hidden quokka"}}); err != nil {
		t.Fatal(err)
	}
	if err := records.LegacyJournalForTest(svc); err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{"quokka": {"legacy-1", "legacy-3"}, "moved": {"legacy-3"}, "three": nil, "hidden": nil}
	check := func(who string, s *records.Service) {
		t.Helper()
		for q, ids := range want {
			if got := searchAll(t, s, q); !reflect.DeepEqual(got, ids) {
				t.Errorf("%s: q=%s finds %v, want %v", who, q, got, ids)
			}
		}
	}
	// A running service indexes the entries in its drains (which trim them only at the next
	// drain, so they are still in the journal for the restart below)...
	if err := svc.SyncTitles(ctx); err != nil {
		t.Fatal(err)
	}
	check("running", svc)
	// ... and a service started over that store at start.
	check("after a restart", restartOver(t, h))
}

// TestJournalOutOfOrder: journal ids follow the wall clock, so a clock step back can give a
// later write an earlier entry. The drain indexes what the store holds (not what the entry
// carries) for a record's second entry in one drain and for an entry committed behind the
// place the previous drain stopped, so the last write wins either way.
func TestJournalOutOfOrder(t *testing.T) {
	t.Parallel()
	h, svc := newHarness(t)
	if h.DB.Backend() == store.BackendPostgres {
		t.Skip("a shared store's follower reads every record (follow.go)")
	}
	ctx := context.Background()
	if err := svc.Stop(ctx); err != nil { // the test runs the drains
		t.Fatal(err)
	}
	put := func(id, title string) {
		t.Helper()
		if _, _, err := svc.Put(ctx, "demo", "posts", records.WriteRecord{ID: id, Data: map[string]any{"title": title}}); err != nil {
			t.Fatal(err)
		}
	}
	rewrite := func(edit func(keys, vals [][]byte) ([][]byte, [][]byte)) {
		t.Helper()
		if err := records.RewriteJournalForTest(svc, edit); err != nil {
			t.Fatal(err)
		}
	}
	drain := func(full bool) {
		t.Helper()
		if err := records.DrainTitlesForTest(svc, full); err != nil {
			t.Fatal(err)
		}
	}
	expect := func(q string, want ...string) {
		t.Helper()
		if got := searchAll(t, svc, q); !slices.Equal(got, want) {
			t.Errorf("q=%s finds %v, want %v", q, got, want)
		}
	}
	drain(true)

	// Two entries of one record in one drain, the later write's first.
	put("swap", "Delta heron")
	put("swap", "Echo heron")
	rewrite(func(keys, vals [][]byte) ([][]byte, [][]byte) {
		return keys, [][]byte{vals[1], vals[0]}
	})
	drain(false)
	expect("echo", "swap")
	expect("delta")

	// An entry committed behind the drain's place: ord's second write got the journal's
	// lowest id; its third was indexed by a partial drain, which does not go back.
	put("ord", "Alpha ibis")
	drain(false)
	put("ord", "Beta ibis")
	put("ord", "Gamma ibis")
	rewrite(func(keys, vals [][]byte) ([][]byte, [][]byte) {
		var nk, nv [][]byte
		for i, k := range keys {
			if strings.Contains(string(vals[i]), "Beta") {
				k = append(k[:bytes.LastIndexByte(k, store.Sep)+1:bytes.LastIndexByte(k, store.Sep)+1], "00000000000000000000000000"...)
			}
			nk, nv = append(nk, k), append(nv, vals[i])
		}
		return nk, nv
	})
	drain(false)
	expect("gamma", "ord")
	drain(true) // reads the late entry: the store holds Gamma
	expect("gamma", "ord")
	expect("beta")
}
