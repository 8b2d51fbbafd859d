package records_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	"github.com/gatehouse-dev/gatehouse/edge/edgetest/storetest"
	"github.com/gatehouse-dev/gatehouse/edge/store"
	"github.com/gatehouse-dev/gatehouse/index/title"
	"github.com/gatehouse-dev/gatehouse/products/records"
)

// openNodeAs starts a records service named node over db (the tenants applied when apply).
func openNodeAs(t *testing.T, db *store.DB, node string, apply bool) *records.Service {
	t.Helper()
	titles, err := title.Open(filepath.Join(t.TempDir(), "title.bleve"))
	if err != nil {
		t.Fatal(err)
	}
	doc := ""
	if apply {
		doc = tenants
	}
	svc, _ := startRecords(t, records.Options{DB: db, Titles: titles, Shared: true, Node: node}, doc, nil)
	t.Cleanup(func() { _ = svc.Close() })
	return svc
}

// TestNodesWriteDistinctStripesAndCountExactly (issue 17): nodes sharing a store write distinct
// counter stripes, a restarted node keeps its stripe, and counts stay exact while several nodes
// create and delete records concurrently, on each backend.
func TestNodesWriteDistinctStripesAndCountExactly(t *testing.T) {
	for _, b := range storetest.Backends() {
		t.Run(b, func(t *testing.T) {
			db := storetest.OpenBackend(t, b)
			ctx := context.Background()
			nodes := []*records.Service{openNodeAs(t, db, "node-a", true)}
			for _, id := range []string{"node-b", "node-c"} {
				nodes = append(nodes, openNodeAs(t, db, id, false))
			}
			seen := map[int]string{}
			for i, n := range nodes {
				st := records.WriteStripeForTest(n)
				if other, ok := seen[st]; ok {
					t.Errorf("node %d writes stripe %d, as does %s", i, st, other)
				}
				seen[st] = fmt.Sprint(i)
			}
			if again := openNodeAs(t, db, "node-b", false); records.WriteStripeForTest(again) != records.WriteStripeForTest(nodes[1]) {
				t.Errorf("node-b restarted writes stripe %d, before %d", records.WriteStripeForTest(again), records.WriteStripeForTest(nodes[1]))
			}
			before, err := records.CountForTest(nodes[0], "demo", "posts")
			if err != nil {
				t.Fatal(err)
			}
			const per = 20
			var wg sync.WaitGroup
			errs := make(chan error, len(nodes)*2)
			for i, n := range nodes {
				for g := 0; g < 2; g++ {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for j := 0; j < per; j++ {
							id := fmt.Sprintf("s-%d-%d-%d", i, g, j)
							if _, _, err := n.Put(ctx, "demo", "posts", records.WriteRecord{ID: id, Data: map[string]any{"title": id, "category": "news"}}); err != nil {
								errs <- err
								return
							}
							if j%4 == 0 { // another node deletes it
								if err := nodes[(i+1)%len(nodes)].Delete(ctx, "demo", "posts", id); err != nil {
									errs <- err
									return
								}
							}
						}
					}()
				}
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Fatal(err)
			}
			want := before + int64(len(nodes)*2*(per-per/4))
			for i, n := range nodes {
				if got, err := records.CountForTest(n, "demo", "posts"); got != want || err != nil {
					t.Errorf("node %d counts %d, %v; want %d", i, got, err, want)
				}
			}
		})
	}
}
