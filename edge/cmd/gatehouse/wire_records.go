package main

import (
	"context"
	"errors"
	"path/filepath"

	"github.com/gatehouse-dev/gatehouse/edge/admin"
	"github.com/gatehouse-dev/gatehouse/edge/store"
	"github.com/gatehouse-dev/gatehouse/index/title"
	"github.com/gatehouse-dev/gatehouse/products/records"
)

// addRecords wires the records product: its service over the store, the title index in
// <data>/title.bleve, the read routes and admin write routes, and its collections section of the
// tenants document (records are written with their indexes in the apply's transaction). The
// service is a component: its Start repairs the title index and starts the worker that follows
// the title journal (queries by title wait for it; /readyz answers 503 until it is done).
func (a *assembly) addRecords(_ context.Context, d *deps) error {
	titles, err := title.Open(filepath.Join(d.cfg.Data, "title.bleve"))
	if err != nil {
		return err
	}
	// On a shared database the node's title index follows the journal other nodes write too,
	// and cached records are checked against the store.
	svc, err := records.NewService(records.Options{DB: d.db, Tenancy: d.tenancy, Titles: titles, Log: d.log.With("product", "records"), Plugins: recordsPlugins{h: d.plugins},
		Shared: d.db.Backend() == store.BackendPostgres, Node: d.node, HotRecords: d.mem.HotRecords, ReadCacheBytes: d.mem.ReadCacheBytes})
	if err != nil {
		return errors.Join(err, titles.Close())
	}
	a.closers = append(a.closers, svc.Close) // the title index with it
	usedGauge(d.reg, "gatehouse_memory_used_bytes", "records_read_cache", func() float64 { _, b := svc.CacheStats(); return float64(b) })
	usedGauge(d.reg, "gatehouse_memory_used_records", "records_hot", func() float64 { n, _ := svc.CacheStats(); return float64(n) })
	if err := d.tenancy.Add(svc); err != nil {
		return err
	}
	a.products = append(a.products, records.NewAPI(svc, d.auth, d.cursors))
	a.components = append(a.components, svc)
	a.overview = append(a.overview, admin.OverviewPart{Name: "records", Read: func(ctx context.Context, q admin.OverviewQuery) (any, error) {
		return svc.Overview(ctx, q.Project)
	}})
	return nil
}
