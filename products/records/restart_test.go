package records_test

import (
	"context"
	"testing"

	"github.com/gatehouse-dev/gatehouse/edge/cursor"
	"github.com/gatehouse-dev/gatehouse/edge/edgetest"
	"github.com/gatehouse-dev/gatehouse/index/title"
	"github.com/gatehouse-dev/gatehouse/products/records"
)

// newServiceOver starts a second service over the harness's store with an empty title index,
// as after losing the index: Start must rebuild it.
func newServiceOver(t *testing.T, h *edgetest.Harness) *records.Service {
	t.Helper()
	cur, _ := cursor.NewCursors([]byte("0123456789abcdef0123456789abcdef"))
	titles, err := title.Open(t.TempDir() + "/title.bleve")
	if err != nil {
		t.Fatal(err)
	}
	svc, err := records.New(records.Options{DB: h.DB, Tenancy: h.Tenancy, Titles: titles, Cursors: cur})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = svc.Close() })
	if err := svc.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	return svc
}
