package records

import (
	"context"
	"errors"
	"path/filepath"

	"github.com/gatehouse-dev/gatehouse/edge"
	"github.com/gatehouse-dev/gatehouse/edge/membudget"
	"github.com/gatehouse-dev/gatehouse/edge/module"
	"github.com/gatehouse-dev/gatehouse/index/title"
)

// Build builds the records product (module.Builder): it opens the title index in
// {data}/title.bleve (the module's closer, Service.Close, closes it), builds the service over
// the store with the records.read plugins (a ReadFilter port), its read routes and admin write
// routes, and its collections section of the tenants document (records are written with their
// indexes in the apply's transaction). The service is a component: its Start repairs the title
// index and starts the worker that follows the title journal (queries by title wait for it;
// /readyz answers 503 until it is done, and again while the worker cannot index).
func Build(_ context.Context, d module.Deps) (module.Module, error) {
	titles, err := title.Open(filepath.Join(d.Config.Data, "title.bleve"))
	if err != nil {
		return module.Module{}, err
	}
	// On a shared database the node's title index follows the journal other nodes write too,
	// and cached records are checked against the store.
	svc, err := NewService(Options{DB: d.DB, Tenancy: d.Tenancy, Titles: titles, Log: d.Log.With("product", "records"),
		Now: d.Now, Plugins: module.Port[ReadFilter](d.Ports), Shared: d.Shared, Node: d.Node,
		HotRecords: d.Memory.HotRecords, ReadCacheBytes: d.Memory.ReadCacheBytes})
	if err != nil {
		return module.Module{}, errors.Join(err, titles.Close())
	}
	if d.Registerer != nil {
		if err := errors.Join(
			d.Registerer.Register(membudget.Used("gatehouse_memory_used_bytes", "records_read_cache", func() float64 { _, b := svc.CacheStats(); return float64(b) })),
			d.Registerer.Register(membudget.Used("gatehouse_memory_used_records", "records_hot", func() float64 { n, _ := svc.CacheStats(); return float64(n) })),
			d.Registerer.Register(membudget.Used("gatehouse_memory_used_bytes", "title_index", func() float64 { return float64(titles.MemoryUsed()) })),
			d.Registerer.Register(membudget.Used("gatehouse_memory_used_records", "journal_follower", func() float64 { return float64(svc.FollowerEntries()) })),
		); err != nil {
			return module.Module{}, errors.Join(err, svc.Close())
		}
	}
	return module.Module{
		Name:       "records",
		API:        []edge.Product{NewAPI(svc, d.Auth, d.Cursors)},
		Owner:      svc,
		Components: []module.Component{svc},
		Closers:    []func() error{svc.Close}, // the title index with it
		Overview: func(ctx context.Context, _, project, _ string) (any, error) {
			return svc.Overview(ctx, project)
		},
		Legacy: LegacyConverters(),
	}, nil
}
