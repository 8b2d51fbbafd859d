package files_test

import (
	"context"
	"errors"
	"testing"

	"github.com/gatehouse-dev/gatehouse/edge/blob"
	"github.com/gatehouse-dev/gatehouse/products/files"
)

// keepBytes is a blob store whose Delete keeps the bytes (a deletion of the bytes that failed,
// or has not happened yet, after the asset's record went).
type keepBytes struct{ blob.Store }

func (keepBytes) Delete(context.Context, string) error { return nil }

// Two nodes share one store: an asset deleted through one is not served by the other's asset
// host from its cache, even while the bytes remain.
func TestAssetDeletedOnAnotherNode(t *testing.T) {
	t.Parallel()
	var local blob.Store
	e := startWith(t, nil, func(t testing.TB, dir string) blob.Store {
		var err error
		if local, err = blob.NewLocal(dir + "/blobs"); err != nil {
			t.Fatal(err)
		}
		return keepBytes{local}
	})
	id := e.upload(t, secret, "a.png", "image/png", pngBytes(t, 4, 4))
	signer, _ := files.NewSigner([]byte("0123456789abcdef0123456789abcdef"))
	other, err := files.NewService(files.Options{DB: e.DB, Blobs: local, Signer: signer, VariantSigner: variantSigner(t), Shared: true})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	open := func() error {
		_, obj, err := other.OpenPublic(ctx, "acme", id, "a.png")
		if err == nil {
			obj.Close()
		}
		return err
	}
	if err := open(); err != nil {
		t.Fatalf("OpenPublic on the other node before the deletion: %v", err)
	}
	if err := e.svc.DeleteAsset(ctx, id, func(string) bool { return true }); err != nil {
		t.Fatal(err)
	}
	if err := open(); !errors.Is(err, files.ErrAssetNotFound) {
		t.Errorf("OpenPublic on the other node after the deletion = %v, want ErrAssetNotFound", err)
	}
}
