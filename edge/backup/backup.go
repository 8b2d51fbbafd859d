// Package backup writes and restores a snapshot of a node's embedded store: one gzipped tar
// holding a manifest, badger's backup stream of the database, and the files of the local blob
// store. It serves `gatehouse backup` (offline, on a stopped node's data folder) and the admin
// route GET /admin/v1/backup (online: a running node holds badger's folder lock, so it is the
// way to back one up), and `gatehouse restore` reads what they wrote into an empty folder.
//
// Consistency: the database stream is a snapshot at one read timestamp, taken first; the blob
// files are copied after it. Products write a blob before the commit that refers to it (forms:
// the files of a submission before the submission; files: the bytes before the upload is
// completed), so every blob the snapshot refers to is already in place when the copy starts.
// Blobs written after the snapshot are copied too (orphans the restored node never lists).
package backup

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/gatehouse-dev/gatehouse/edge/store"
)

// Names inside the archive, and the format this package writes.
const (
	// FormatVersion is the archive layout version in the manifest; Restore refuses others.
	FormatVersion = 1
	manifestName  = "manifest.json"
	dbName        = "db.badger"
	blobsPrefix   = "blobs/"
)

// Sentinel errors of the package.
var (
	// ErrNotEmpty refuses a restore into a folder that already holds something.
	ErrNotEmpty = errors.New("backup: the target folder is not empty")
	// ErrInvalid reports an archive that is not a complete gatehouse backup this build reads.
	ErrInvalid = errors.New("backup: not a complete gatehouse backup")
)

// Manifest describes an archive; it is its first entry.
type Manifest struct {
	Format    int       `json:"format"`
	Backend   string    `json:"backend"`
	CreatedAt time.Time `json:"createdAt"`
	Version   string    `json:"gatehouseVersion"`
	// Blobs is "local" when the archive holds the local blob store's files, "none" when the
	// node keeps its blobs elsewhere (files.backend s3: back the bucket up with S3's tools).
	Blobs string `json:"blobs"`
}

// Source is what a backup reads.
type Source struct {
	DB *store.DB
	// BlobsDir is the local blob store's folder; empty when blobs are not local.
	BlobsDir string
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
	m := Manifest{Format: FormatVersion, Backend: "badger", CreatedAt: s.at, Version: s.src.Version, Blobs: "none"}
	if s.src.BlobsDir != "" {
		m.Blobs = "local"
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
	if s.src.BlobsDir != "" {
		if err := writeBlobs(ctx, tw, s.src.BlobsDir); err != nil {
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

// writeBlobs adds every complete file of the local blob store (not the temporary files of
// uploads in progress). The local store never rewrites a file in place (it renames a complete
// one over it), so an open file is a complete object; one deleted meanwhile is skipped.
func writeBlobs(ctx context.Context, tw *tar.Writer, dir string) error {
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("backup: blobs: %w", err)
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if !d.Type().IsRegular() || strings.HasPrefix(d.Name(), ".upload-") {
			return nil
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		f, err := os.Open(p)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("backup: blobs: %w", err)
		}
		defer f.Close()
		st, err := f.Stat()
		if err != nil {
			return fmt.Errorf("backup: blobs: %w", err)
		}
		return writeEntry(tw, blobsPrefix+filepath.ToSlash(rel), st.Size(), st.ModTime(), f)
	})
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
// truncated, corrupt, or lacks the manifest or the database.
func Verify(r io.Reader) (Manifest, error) {
	var m Manifest
	hasDB := false
	err := walk(r, &m, func(h *tar.Header, tr *tar.Reader) error {
		hasDB = hasDB || h.Name == dbName
		_, err := io.Copy(io.Discard, tr)
		return err
	})
	if err == nil && !hasDB {
		err = fmt.Errorf("%w: no database in the archive", ErrInvalid)
	}
	return m, err
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
			if m.Format != FormatVersion || m.Backend != "badger" {
				return fmt.Errorf("%w: format %d of backend %q (this build reads format %d of badger)", ErrInvalid, m.Format, m.Backend, FormatVersion)
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
