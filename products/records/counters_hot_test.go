package records_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/edge/edgetest/storetest"
	"github.com/gatehouse-dev/gatehouse/edge/store"
	"github.com/gatehouse-dev/gatehouse/edge/store/pgtest"
	"github.com/gatehouse-dev/gatehouse/edge/tenancy"
	"github.com/gatehouse-dev/gatehouse/index/title"
	"github.com/gatehouse-dev/gatehouse/products/records"
)

// The counter parts a node writes are read from the store's memory of hot keys on badger
// (store.Txn.GetHot), not the store: these tests hold the counts exact, against a recount of
// the stored records, wherever else the parts are written from (table-driven, each backend).

// hotDocs are two documents applied in turn: the second changes a post's category,
// publishes one, drops one from the document (pruned) and drops the internal collection
// (a drop after the commit, with Batches); the first brings them back.
func hotDocs() [2]string {
	a := "prune: true\n" + tenants
	b := strings.Replace(a, "category: news, tags: [go], views: 3,", "category: reviews, tags: [go], views: 3,", 1)
	b = strings.Replace(b, "{id: post-6, published: false,", "{id: post-6, published: true,", 1)
	var kept []string
	for _, l := range strings.Split(b, "\n") {
		if !strings.Contains(l, "id: post-5") {
			kept = append(kept, l)
		}
	}
	b = strings.Join(kept, "\n")
	i := strings.Index(b, "          - name: internal")
	j := strings.Index(b, "      - id: other")
	b = b[:i] + b[j:]
	return [2]string{a, b}
}

// checkCounts fails t unless svc's counters of demo/posts match a recount of its records.
func checkCounts(t *testing.T, svc *records.Service, when string) {
	t.Helper()
	got, want, err := records.CountsForTest(svc, "demo", "posts", "category")
	if err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Fatalf("%s: counters %s; the records count %s", when, got, want)
	}
}

// apply applies doc through ten.
func apply(t *testing.T, ten *tenancy.Service, doc string) {
	t.Helper()
	d, err := tenancy.Parse([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ten.Apply(context.Background(), d); err != nil {
		t.Fatal(err)
	}
}

// writer is one concurrent writer of a scenario: it runs n writes, the i-th by fn.
type writer struct {
	n  int
	fn func(i int) error
}

// runWriters runs ws concurrently (so their Updates share group commits) and fails t on an
// error.
func runWriters(t *testing.T, ws ...writer) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, len(ws))
	for _, w := range ws {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range w.n {
				if err := w.fn(i); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

var categories = []string{"news", "guides", "reviews"}

// creator creates, and now and then deletes, unpublishes or republishes, records of posts
// named after tag through svc.
func creator(svc *records.Service, tag string, n int) writer {
	ctx := context.Background()
	return writer{n: n, fn: func(i int) error {
		id := fmt.Sprintf("%s-%d", tag, i)
		data := map[string]any{"title": id, "category": categories[i%len(categories)]}
		if _, _, err := svc.Put(ctx, "demo", "posts", records.WriteRecord{ID: id, Data: data}); err != nil {
			return err
		}
		prev := fmt.Sprintf("%s-%d", tag, i-1)
		switch i % 5 {
		case 1:
			return svc.Delete(ctx, "demo", "posts", prev)
		case 2:
			_, err := svc.SetPublished(ctx, "demo", "posts", prev, false)
			return err
		case 3:
			_, err := svc.SetPublished(ctx, "demo", "posts", fmt.Sprintf("%s-%d", tag, i-2), true)
			return err
		}
		return nil
	}}
}

// openShared opens the store of a node of a shared deployment: on postgres its own
// connection to the database url names (another node's committer), on badger db itself (one
// process holds a badger store).
func openShared(t *testing.T, backend string, db *store.DB, url string) *store.DB {
	t.Helper()
	if backend != store.BackendPostgres {
		return db
	}
	other, err := store.Open(store.Options{Backend: store.BackendPostgres, PostgresURL: url})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = other.Close() })
	return other
}

func TestCountersExactWithHotParts(t *testing.T) {
	docs := hotDocs()
	cases := []struct {
		name string
		run  func(t *testing.T, backend string)
	}{
		{"creates interleaved with document applies and a collection drop", func(t *testing.T, backend string) {
			db := storetest.OpenBackend(t, backend)
			svc, ten := startRecords(t, records.Options{DB: db, Shared: backend == store.BackendPostgres}, docs[0], nil)
			defer svc.Close()
			runWriters(t, creator(svc, "a", 40), creator(svc, "b", 40),
				writer{n: 8, fn: func(i int) error { apply(t, ten, docs[(i+1)%2]); return nil }})
			checkCounts(t, svc, "after the writes")
			runWriters(t, creator(svc, "c", 10))
			checkCounts(t, svc, "after more creates")
		}},
		{"failed updates and groups split over commits", func(t *testing.T, backend string) {
			db := storetest.OpenBackend(t, backend)
			svc, _ := startRecords(t, records.Options{DB: db, Shared: backend == store.BackendPostgres}, docs[0], nil)
			defer svc.Close()
			const pad = 2 << 20 // two such Updates exceed one badger commit (15% of a 16 MB memtable)
			put := func(tag string, big, fail bool) writer {
				return writer{n: 12, fn: func(i int) error {
					id := fmt.Sprintf("%s-%d", tag, i)
					p := 0
					if big {
						p = pad
					}
					return records.PutInUpdateForTest(svc, "demo", "posts", id, map[string]any{"title": id, "category": categories[i%3]}, p, fail && i%2 == 0)
				}}
			}
			runWriters(t, creator(svc, "a", 30), put("big", true, false), put("big-fail", true, true),
				put("fail", false, true), put("big2", true, false), creator(svc, "b", 30))
			checkCounts(t, svc, "after the writes")
			runWriters(t, creator(svc, "c", 10))
			checkCounts(t, svc, "after more creates")
		}},
		{"a stripe taken over by another node", func(t *testing.T, backend string) {
			var db *store.DB
			url := ""
			if backend == store.BackendPostgres {
				url = pgtest.URL(t)
				db = openShared(t, backend, nil, url)
			} else {
				db = storetest.OpenBackend(t, backend)
			}
			clock := time.Unix(1_800_000_000, 0)
			node := func(db *store.DB, id string, at time.Time, doc string) *records.Service {
				titles, err := title.Open(filepath.Join(t.TempDir(), "title.bleve"))
				if err != nil {
					t.Fatal(err)
				}
				svc, _ := startRecords(t, records.Options{DB: db, Titles: titles, Shared: true, Node: id, Now: func() time.Time { return at }}, doc, nil)
				t.Cleanup(func() { _ = svc.Close() })
				return svc
			}
			a := node(db, "node-a", clock, docs[0])
			runWriters(t, creator(a, "a", 10))
			// node-b prefers node-a's stripe and starts after node-a's claim ran out.
			b := ""
			for i := 0; b == ""; i++ {
				if id := fmt.Sprintf("node-b%d", i); records.PreferredStripeForTest(id) == records.WriteStripeForTest(a) {
					b = id
				}
			}
			nb := node(openShared(t, backend, db, url), b, clock.Add(time.Hour), "")
			if records.WriteStripeForTest(nb) != records.WriteStripeForTest(a) {
				t.Fatalf("%s writes stripe %d, node-a %d: no takeover", b, records.WriteStripeForTest(nb), records.WriteStripeForTest(a))
			}
			runWriters(t, creator(nb, "b", 20))
			runWriters(t, creator(a, "a2", 20), creator(nb, "b2", 20))
			checkCounts(t, a, "node-a, after both nodes wrote one stripe")
			checkCounts(t, nb, "node-b, after both nodes wrote one stripe")
		}},
		{"a restart", func(t *testing.T, backend string) {
			dir := t.TempDir()
			opts := store.Options{Dir: dir, SyncWrites: true}
			if backend == store.BackendPostgres {
				opts = store.Options{Backend: store.BackendPostgres, PostgresURL: pgtest.URL(t)}
			}
			for round := range 3 {
				db, err := store.Open(opts)
				if err != nil {
					t.Fatal(err)
				}
				svc, ten := startRecords(t, records.Options{DB: db, Shared: backend == store.BackendPostgres}, docs[round%2], nil)
				checkCounts(t, svc, fmt.Sprintf("at start %d", round))
				runWriters(t, creator(svc, fmt.Sprintf("r%d", round), 15))
				apply(t, ten, docs[(round+1)%2])
				runWriters(t, creator(svc, fmt.Sprintf("s%d", round), 15))
				checkCounts(t, svc, fmt.Sprintf("before stop %d", round))
				if err := svc.Close(); err != nil {
					t.Fatal(err)
				}
				if err := db.Close(); err != nil {
					t.Fatal(err)
				}
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, b := range storetest.Backends() {
				t.Run(b, func(t *testing.T) { c.run(t, b) })
			}
		})
	}
}
