package blob

import (
	"context"
	"fmt"

	"github.com/gatehouse-dev/gatehouse/edge/config"
)

// Open returns the store the configuration names: the local folder dir (files.backend
// local, the default) or the S3-compatible bucket of files.s3 (files.backend s3).
func Open(ctx context.Context, cfg config.Files, dir string) (Store, error) {
	switch cfg.Backend {
	case "", "local":
		return NewLocal(dir)
	case "s3":
		return NewS3(ctx, S3Options{
			Endpoint: cfg.S3.Endpoint, Bucket: cfg.S3.Bucket, Region: cfg.S3.Region,
			AccessKey: cfg.S3.AccessKey, SecretKey: cfg.S3.SecretKey, UseSSL: cfg.S3.UseSSL,
		})
	}
	return nil, fmt.Errorf("blob: unknown backend %q (local or s3)", cfg.Backend)
}
