// Package backup writes and restores a snapshot of a node: one gzipped tar holding a
// manifest, the store's backup stream of the database (store.DB.Backup: badger's stream
// format, which the postgres backend writes too, so a snapshot of either backend restores into
// either), and every object of the blob store (the local folder or the S3 bucket). It serves
// `gatehouse backup` (offline, opening the store serve would open), the admin route GET
// /admin/v1/backup (online: a running badger node holds its folder lock, so it is the way to
// back one up), and `gatehouse restore`, which reads what they wrote into an empty store.
//
// Consistency: the database stream is a snapshot at one point (badger's read timestamp, a
// REPEATABLE READ transaction on postgres), taken first; the blobs are copied after it.
// Products write a blob before the commit that refers to it (forms: the files of a submission
// before the submission; files: the bytes before the upload is completed), so every blob the
// snapshot refers to is already in place when the copy starts. Blobs written after the
// snapshot are copied too (orphans the restored node never lists).
package backup

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/gatehouse-dev/gatehouse/edge/blob"
	"github.com/gatehouse-dev/gatehouse/edge/store"
)

// Names inside the archive, and the format this package writes.
const (
	// FormatVersion is the archive layout version in the manifest; Restore refuses others.
	FormatVersion = 1
	manifestName  = "manifest.json"
	// dbName holds the store's backup stream (badger's format, whichever backend wrote it).
	dbName      = "db.badger"
	blobsPrefix = "blobs/"
)

// Sentinel errors of the package.
var (
	// ErrNotEmpty refuses a restore into a store (or folder) that already holds something.
	ErrNotEmpty = errors.New("backup: the target is not empty")
	// ErrInvalid reports an archive that is not a complete gatehouse backup this build reads.
	ErrInvalid = errors.New("backup: not a complete gatehouse backup")
)

// Manifest describes an archive; it is its first entry.
type Manifest struct {
	Format int `json:"format"`
	// Backend is the store the snapshot was taken from: badger or postgres.
	Backend   string    `json:"backend"`
	CreatedAt time.Time `json:"createdAt"`
	Version   string    `json:"gatehouseVersion"`
	// Blobs is where the archived blob files came from: "local" (the node's blob folder),
	// "s3" (the bucket of files.backend s3), or "none" when the archive holds no blob store.
	Blobs string `json:"blobs"`
	// BlobCount is the number of blob files in the archive (filled by Verify).
	BlobCount int `json:"-"`
}

// Blobs is a blob store a backup copies whole: blob.Local and blob.S3.
type Blobs interface {
	Open(ctx context.Context, key string) (blob.Object, error)
	List(ctx context.Context, fn func(key string, size int64) error) error
}

var (
	_ Blobs = (*blob.Local)(nil)
	_ Blobs = (*blob.S3)(nil)
)

// Source is what a backup reads.
type Source struct {
	DB *store.DB
	// Blobs is the blob store whose objects the archive holds; nil for none.
	Blobs Blobs
	// BlobsKind names Blobs in the manifest: "local" or "s3".
	BlobsKind string
	// TempDir holds the database snapshot while the archive is written ("" = os.TempDir).
	TempDir string
	// Version is the gatehouse build, recorded in the manifest.
	Version string
}

// Snapshot is a database snapshot taken and waiting to be archived with the blobs.
type Snapshot struct {
	src  Source
	db   *os.File
	size int64
	at   time.Time
}

// Take snapshots the database into a temporary file (the consistent point of the backup).
// Write the archive with WriteTo, then Close.
func Take(src Source) (*Snapshot, error) {
	f, err := os.CreateTemp(src.TempDir, ".gatehouse-backup-*")
	if err != nil {
		return nil, fmt.Errorf("backup: %w", err)
	}
	s := &Snapshot{src: src, db: f, at: time.Now().UTC()}
	if err := src.DB.Backup(f); err != nil {
		s.Close()
		return nil, err
	}
	if s.size, err = f.Seek(0, io.SeekCurrent); err != nil {
		s.Close()
		return nil, fmt.Errorf("backup: %w", err)
	}
	return s, nil
}

// Close removes the temporary snapshot.
func (s *Snapshot) Close() error {
	s.db.Close()
	return os.Remove(s.db.Name())
}

// WriteTo writes the archive (gzipped tar: manifest, database, blob files) to w.
func (s *Snapshot) WriteTo(ctx context.Context, w io.Writer) error {
	zw := gzip.NewWriter(w)
	tw := tar.NewWriter(zw)
	m := Manifest{Format: FormatVersion, Backend: s.src.DB.Backend(), CreatedAt: s.at, Version: s.src.Version, Blobs: "none"}
	if s.src.Blobs != nil {
		m.Blobs = s.src.BlobsKind
	}
	raw, _ := json.MarshalIndent(m, "", "  ")
	if err := writeEntry(tw, manifestName, int64(len(raw)), s.at, strings.NewReader(string(raw))); err != nil {
		return err
	}
	if _, err := s.db.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	if err := writeEntry(tw, dbName, s.size, s.at, s.db); err != nil {
		return err
	}
	if s.src.Blobs != nil {
		if err := writeBlobs(ctx, tw, s.src.Blobs, s.at); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	if err := zw.Close(); err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	return nil
}

func writeEntry(tw *tar.Writer, name string, size int64, mod time.Time, r io.Reader) error {
	if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Size: size, Mode: 0o600, ModTime: mod}); err != nil {
		return fmt.Errorf("backup: %s: %w", name, err)
	}
	if _, err := io.CopyN(tw, r, size); err != nil {
		return fmt.Errorf("backup: %s: %w", name, err)
	}
	return nil
}

// writeBlobs adds every object of the blob store (the local store lists complete files only,
// never the temporary file of an upload in progress). Neither store rewrites an object in
// place, so an open object is complete; one deleted between the listing and its open is
// skipped.
func writeBlobs(ctx context.Context, tw *tar.Writer, blobs Blobs, at time.Time) error {
	err := blobs.List(ctx, func(key string, _ int64) error {
		obj, err := blobs.Open(ctx, key)
		if errors.Is(err, blob.ErrNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		defer obj.Close()
		return writeEntry(tw, blobsPrefix+key, obj.Size(), at, obj)
	})
	if err != nil {
		return fmt.Errorf("backup: blobs: %w", err)
	}
	return nil
}

// Write takes a snapshot of src and writes the archive to w.
func Write(ctx context.Context, w io.Writer, src Source) error {
	s, err := Take(src)
	if err != nil {
		return err
	}
	defer s.Close()
	return s.WriteTo(ctx, w)
}

// Verify reads an archive through and reports its manifest, or ErrInvalid when it is
// truncated or corrupt, lacks the manifest or the database, or holds an entry Restore would
// refuse (an unknown name, a second database, a blob key escaping the store). Restore after a
// successful Verify fails only on the target's errors.
func Verify(r io.Reader) (Manifest, error) {
	var m Manifest
	hasDB := false
	err := walk(r, &m, func(h *tar.Header, tr *tar.Reader) error {
		switch err := checkEntry(h, hasDB); {
		case err != nil:
			return err
		case h.Name == dbName:
			hasDB = true
		default:
			m.BlobCount++
		}
		_, err := io.Copy(io.Discard, tr)
		return err
	})
	if err == nil && !hasDB {
		err = fmt.Errorf("%w: no database in the archive", ErrInvalid)
	}
	return m, err
}

// checkEntry refuses an entry that is neither the (first) database nor a blob file with a
// valid key.
func checkEntry(h *tar.Header, hasDB bool) error {
	switch {
	case h.Name == dbName && !hasDB:
		return nil
	case strings.HasPrefix(h.Name, blobsPrefix) && h.Typeflag == tar.TypeReg:
		if key := strings.TrimPrefix(h.Name, blobsPrefix); blob.CheckKey(key) != nil {
			return fmt.Errorf("%w: blob %q escapes the blob store", ErrInvalid, key)
		}
		return nil
	}
	return fmt.Errorf("%w: unexpected entry %q", ErrInvalid, h.Name)
}

// walk reads the manifest (which must come first and be one this build reads) into m, then
// calls fn for every other entry.
func walk(r io.Reader, m *Manifest, fn func(*tar.Header, *tar.Reader) error) error {
	zr, err := gzip.NewReader(r)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	tr := tar.NewReader(zr)
	for first := true; ; first = false {
		h, err := tr.Next()
		if err == io.EOF {
			if first {
				return fmt.Errorf("%w: empty archive", ErrInvalid)
			}
			break
		}
		if err != nil {
			return fmt.Errorf("%w: %v", ErrInvalid, err)
		}
		if first {
			if h.Name != manifestName {
				return fmt.Errorf("%w: the first entry is %q, not %s", ErrInvalid, h.Name, manifestName)
			}
			if err := json.NewDecoder(io.LimitReader(tr, 1<<20)).Decode(m); err != nil {
				return fmt.Errorf("%w: manifest: %v", ErrInvalid, err)
			}
			if m.Format != FormatVersion || (m.Backend != store.BackendBadger && m.Backend != store.BackendPostgres) {
				return fmt.Errorf("%w: format %d of backend %q (this build reads format %d of badger or postgres)", ErrInvalid, m.Format, m.Backend, FormatVersion)
			}
			continue
		}
		if err := fn(h, tr); err != nil {
			if errors.Is(err, io.ErrUnexpectedEOF) {
				return fmt.Errorf("%w: %v", ErrInvalid, err)
			}
			return err
		}
	}
	// The gzip trailer (checksum and length) is checked once the stream is read to its end.
	if _, err := io.Copy(io.Discard, zr); err != nil {
		return fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	return nil
}
