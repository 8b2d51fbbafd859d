package main

import (
	"context"
	"time"

	"github.com/gatehouse-dev/gatehouse/edge/admin"
	"github.com/gatehouse-dev/gatehouse/edge/secrets"
	"github.com/gatehouse-dev/gatehouse/edge/store"
	"github.com/gatehouse-dev/gatehouse/products/files"
)

// addFiles wires the File-asset product: the API at {public_url}/files, the asset host at
// {public_url}/cdn (and asset_host) with the image variants the tenants document names, and the
// sweeper of expired pending uploads.
func (a *assembly) addFiles(ctx context.Context, d *deps) error {
	key, err := secrets.Get(ctx, d.db, "upload-url-key", 32)
	if err != nil {
		return err
	}
	signer, err := files.NewSigner(key)
	if err != nil {
		return err
	}
	vkey, err := secrets.Get(ctx, d.db, "variant-url-key", 32)
	if err != nil {
		return err
	}
	vsigner, err := files.NewVariantSigner(vkey)
	if err != nil {
		return err
	}
	svc, err := files.NewService(files.Options{
		DB: d.db, Blobs: d.blobs, Signer: signer, VariantSigner: vsigner,
		VariantMaxPixels: d.cfg.Files.VariantMaxPixels, VariantMemoryMB: d.cfg.Files.VariantMemoryMB,
		FilesBase: d.cfg.BaseURL("files"), AssetBase: d.cfg.AssetBaseURL(), Log: d.log.With("product", "files"), Registerer: d.reg,
		Events: fileEvents{hooks: d.hooks}, Shared: d.db.Backend() == store.BackendPostgres,
	})
	if err != nil {
		return err
	}
	if err := d.tenancy.Add(svc); err != nil {
		return err
	}
	a.products = append(a.products, files.NewAPI(svc, d.auth, d.cursors), files.NewHost(svc))
	a.components = append(a.components, svc.NewSweeper(files.SweeperOptions{Interval: time.Minute}))
	a.overview = append(a.overview, admin.OverviewPart{Name: "files", Read: func(ctx context.Context, q admin.OverviewQuery) (any, error) {
		return svc.Overview(ctx, q.Org, q.Project)
	}})
	return nil
}
