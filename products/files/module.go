package files

import (
	"context"
	"os"
	"time"

	"github.com/gatehouse-dev/gatehouse/edge"
	"github.com/gatehouse-dev/gatehouse/edge/module"
	"github.com/gatehouse-dev/gatehouse/edge/secrets"
)

// Build builds the File-asset product (module.Builder): the API at {public_url}/files, the
// asset host at {public_url}/cdn (and asset_host) with the image variants the tenants document
// names, signed with the server secrets upload-url-key and variant-url-key, the completion
// events (an Events port), and the sweeper of expired pending uploads.
func Build(ctx context.Context, d module.Deps) (module.Module, error) {
	key, err := secrets.Get(ctx, d.DB, "upload-url-key", 32)
	if err != nil {
		return module.Module{}, err
	}
	signer, err := NewSigner(key)
	if err != nil {
		return module.Module{}, err
	}
	vkey, err := secrets.Get(ctx, d.DB, "variant-url-key", 32)
	if err != nil {
		return module.Module{}, err
	}
	vsigner, err := NewVariantSigner(vkey)
	if err != nil {
		return module.Module{}, err
	}
	svc, err := NewService(Options{
		DB: d.DB, Blobs: d.Blobs, Signer: signer, VariantSigner: vsigner,
		VariantMaxPixels: d.Config.Files.VariantMaxPixels, VariantMemoryMB: d.Config.Files.VariantMemoryMB,
		FilesBase: d.Config.BaseURL("files"), AssetBase: d.Config.AssetBaseURL(), Log: d.Log.With("product", "files"),
		Registerer: d.Registerer, Now: d.Now, Events: module.Port[Events](d.Ports), Shared: d.Shared,
		VariantWorker: workerCommand(),
	})
	if err != nil {
		return module.Module{}, err
	}
	return module.Module{
		Name:       "files",
		API:        []edge.Product{NewAPI(svc, d.Auth, d.Cursors), NewHost(svc)},
		Owner:      svc,
		Closers:    []func() error{svc.Close},
		Components: []module.Component{svc.NewSweeper(SweeperOptions{Interval: time.Minute})},
		Overview: func(ctx context.Context, org, project, _ string) (any, error) {
			return svc.Overview(ctx, org, project)
		},
	}, nil
}

// workerCommand is this binary's variant-worker command line (worker.go), or nil (builds in
// the gateway's process) when the executable cannot be found.
func workerCommand() []string {
	exe, err := os.Executable()
	if err != nil {
		return nil
	}
	return []string{exe, "variant-worker"}
}
