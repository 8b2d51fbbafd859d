package backup

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/gatehouse-dev/gatehouse/edge/blob"
	"github.com/gatehouse-dev/gatehouse/edge/store"
)

// Target is where Restore writes: an open store of either backend, which must be empty
// (CheckEmpty), and the blob store that receives the archive's files.
type Target struct {
	DB *store.DB
	// Blobs receives the blob files; nil refuses an archive that holds any.
	Blobs blob.Store
}

// Restore reads an archive into t: the database stream into t.DB (whichever backend wrote
// it), then the blob files into t.Blobs. Verify the archive first: Restore refuses a bad
// entry only when it reaches it, after it wrote the ones before.
func Restore(ctx context.Context, r io.Reader, t Target) (m Manifest, err error) {
	loaded := false
	err = walk(r, &m, func(h *tar.Header, tr *tar.Reader) error {
		if err := checkEntry(h, loaded); err != nil {
			return err
		}
		if h.Name == dbName {
			loaded = true
			return t.DB.Load(tr)
		}
		if t.Blobs == nil {
			return fmt.Errorf("%w: the archive holds blob files and the target has no blob store", ErrInvalid)
		}
		key := strings.TrimPrefix(h.Name, blobsPrefix)
		n, err := t.Blobs.Put(ctx, key, tr, "")
		if err == nil && n != h.Size {
			err = fmt.Errorf("%w: blob %q is truncated", ErrInvalid, key)
		}
		return err
	})
	if err == nil && !loaded {
		err = fmt.Errorf("%w: no database in the archive", ErrInvalid)
	}
	return m, err
}

// CheckEmpty returns ErrNotEmpty when db holds any key.
func CheckEmpty(ctx context.Context, db *store.DB) error {
	var first []byte
	err := db.View(ctx, func(tx *store.Txn) error {
		return tx.Iterate(store.IterOptions{KeysOnly: true}, func(k, _ []byte) (bool, error) {
			first = bytes.Clone(k)
			return false, nil
		})
	})
	if err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	if first != nil {
		return fmt.Errorf("%w: the database holds keys (%q first)", ErrNotEmpty, first)
	}
	return nil
}

// Clear deletes every key of db: what a failed restore into a shared database wrote.
func Clear(ctx context.Context, db *store.DB) error {
	b := db.NewBatch()
	err := db.View(ctx, func(tx *store.Txn) error {
		return tx.Iterate(store.IterOptions{KeysOnly: true}, func(k, _ []byte) (bool, error) {
			return true, b.Delete(bytes.Clone(k))
		})
	})
	if err != nil {
		b.Cancel()
		return fmt.Errorf("backup: %w", err)
	}
	return b.Flush()
}

// CheckEmptyDir refuses a folder with anything in it; a missing one is created.
func CheckEmptyDir(dir string) error {
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
