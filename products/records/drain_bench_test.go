package records_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/gatehouse-dev/gatehouse/index/title"
	"github.com/gatehouse-dev/gatehouse/products/records"
)

// BenchmarkTitleDrain: the time of one journal drain of 3,000 created records into an on-disk
// title index (the writes themselves are not timed); ns/op is per drained entry. Run it
// against a base build to compare (bleve's merges run in the background and are not in it).
func BenchmarkTitleDrain(b *testing.B) {
	_, svc := newHarness(b, func(o *records.Options) {
		_ = o.Titles.Close()
		x, err := title.Open(b.TempDir() + "/title.bleve")
		if err != nil {
			b.Fatal(err)
		}
		o.Titles = x
	})
	ctx := context.Background()
	if err := svc.Stop(ctx); err != nil {
		b.Fatal(err)
	}
	const per = 3000
	n := 0
	b.ResetTimer()
	for i := 0; i < b.N; i += per {
		b.StopTimer()
		for j := 0; j < per; j++ {
			n++
			id := fmt.Sprintf("bench-%07d", n)
			if _, _, err := svc.Put(ctx, "demo", "posts", records.WriteRecord{ID: id, Data: map[string]any{"title": fmt.Sprintf("Bench record number %d of the drain %d", n, j%97)}}); err != nil {
				b.Fatal(err)
			}
		}
		b.StartTimer()
		if err := svc.SyncTitles(ctx); err != nil {
			b.Fatal(err)
		}
	}
}
