package backup

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/gatehouse-dev/gatehouse/edge/blob"
	"github.com/gatehouse-dev/gatehouse/edge/store"
)

// Restore reads an archive into dataDir, which must be missing or empty (ErrNotEmpty): the
// database into dataDir/db (opened with opts, its Dir replaced) and the blob files into
// dataDir/blobs, the layout `gatehouse serve --data dataDir` reads. On failure it removes what
// it wrote.
func Restore(ctx context.Context, r io.Reader, dataDir string, opts store.Options) (m Manifest, err error) {
	if err := checkEmpty(dataDir); err != nil {
		return m, err
	}
	dbDir, blobsDir := filepath.Join(dataDir, "db"), filepath.Join(dataDir, "blobs")
	defer func() {
		if err != nil {
			_ = os.RemoveAll(dbDir)
			_ = os.RemoveAll(blobsDir)
		}
	}()
	opts.Dir, opts.InMemory = dbDir, false
	var blobs *blob.Local
	loaded := false
	err = walk(r, &m, func(h *tar.Header, tr *tar.Reader) error {
		switch {
		case h.Name == dbName && !loaded:
			loaded = true
			db, err := store.Open(opts)
			if err != nil {
				return err
			}
			return errors.Join(db.Load(tr), db.Close())
		case strings.HasPrefix(h.Name, blobsPrefix) && h.Typeflag == tar.TypeReg:
			if blobs == nil {
				var err error
				if blobs, err = blob.NewLocal(blobsDir); err != nil {
					return err
				}
			}
			key := strings.TrimPrefix(h.Name, blobsPrefix)
			if err := blob.CheckKey(key); err != nil {
				return fmt.Errorf("%w: blob %q: %v", ErrInvalid, key, err)
			}
			n, err := blobs.Put(ctx, key, tr, "")
			if err == nil && n != h.Size {
				err = fmt.Errorf("%w: blob %q is truncated", ErrInvalid, key)
			}
			return err
		}
		return fmt.Errorf("%w: unexpected entry %q", ErrInvalid, h.Name)
	})
	if err == nil && !loaded {
		err = fmt.Errorf("%w: no database in the archive", ErrInvalid)
	}
	return m, err
}

// checkEmpty refuses a folder with anything in it; a missing one is created.
func checkEmpty(dir string) error {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		if err := os.MkdirAll(dir, 0o750); err != nil {
			return fmt.Errorf("backup: %w", err)
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	if len(entries) > 0 {
		return fmt.Errorf("%w: %s holds %s", ErrNotEmpty, dir, entries[0].Name())
	}
	return nil
}
