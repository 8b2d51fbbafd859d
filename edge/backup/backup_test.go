package backup

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/gatehouse-dev/gatehouse/edge/store"
)

// sample writes an archive of a small node: two keys and two blobs (and an upload in progress,
// which must not be archived).
func sample(t testing.TB) []byte {
	t.Helper()
	dir := t.TempDir()
	db, err := store.Open(store.Options{Dir: filepath.Join(dir, "db")})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	if err := db.Update(ctx, func(tx *store.Txn) error {
		return errors.Join(tx.Set([]byte("a"), []byte("1")), tx.Set([]byte("b"), []byte("2")))
	}); err != nil {
		t.Fatal(err)
	}
	blobs := filepath.Join(dir, "blobs")
	for name, body := range map[string]string{"p/x.png": "png", "q/r/s.txt": "text", "p/.upload-123": "partial"} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(blobs, name)), 0o750); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(blobs, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	var buf bytes.Buffer
	if err := Write(ctx, &buf, Source{DB: db, BlobsDir: blobs, TempDir: dir, Version: "test"}); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestWriteRestore(t *testing.T) {
	raw := sample(t)
	m, err := Verify(bytes.NewReader(raw))
	if err != nil || m.Format != FormatVersion || m.Backend != "badger" || m.Version != "test" || m.Blobs != "local" {
		t.Fatalf("Verify = %+v, %v", m, err)
	}
	dir := filepath.Join(t.TempDir(), "restored")
	if _, err := Restore(context.Background(), bytes.NewReader(raw), dir, store.Options{}); err != nil {
		t.Fatalf("Restore: %v", err)
	}
	for name, want := range map[string]string{"blobs/p/x.png": "png", "blobs/q/r/s.txt": "text"} {
		if got, err := os.ReadFile(filepath.Join(dir, name)); err != nil || string(got) != want {
			t.Errorf("restored %s = %q, %v; want %q", name, got, err, want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "blobs/p/.upload-123")); !os.IsNotExist(err) {
		t.Errorf("an upload in progress was archived (%v)", err)
	}
	db, err := store.Open(store.Options{Dir: filepath.Join(dir, "db")})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	_ = db.View(context.Background(), func(tx *store.Txn) error {
		if v, err := tx.Get([]byte("b")); err != nil || string(v) != "2" {
			t.Errorf("restored Get(b) = %q, %v", v, err)
		}
		return nil
	})
	// A second restore into the same (now full) folder is refused.
	if _, err := Restore(context.Background(), bytes.NewReader(raw), dir, store.Options{}); !errors.Is(err, ErrNotEmpty) {
		t.Errorf("Restore into a full folder = %v, want ErrNotEmpty", err)
	}
}

// archive builds a gzipped tar of the given entries.
func archive(entries ...[2]string) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for _, e := range entries {
		_ = tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: e[0], Size: int64(len(e[1])), Mode: 0o600})
		_, _ = tw.Write([]byte(e[1]))
	}
	_ = tw.Close()
	_ = zw.Close()
	return buf.Bytes()
}

func TestRestoreRefusesBadArchives(t *testing.T) {
	good := sample(t)
	manifest := [2]string{manifestName, `{"format":1,"backend":"badger"}`}
	for _, tc := range []struct {
		name string
		raw  []byte
	}{
		{"truncated", good[:len(good)-20]},
		{"not gzip", []byte("hello")},
		{"empty tar", archive()},
		{"no manifest first", archive([2]string{dbName, ""}, manifest)},
		{"other format", archive([2]string{manifestName, `{"format":2,"backend":"badger"}`}, [2]string{dbName, ""})},
		{"other backend", archive([2]string{manifestName, `{"format":1,"backend":"postgres"}`}, [2]string{dbName, ""})},
		{"no database", archive(manifest)},
		{"blob escaping the folder", archive(manifest, [2]string{dbName, ""}, [2]string{"blobs/../../etc/x", "x"})},
		{"unknown entry", archive(manifest, [2]string{dbName, ""}, [2]string{"other", "x"})},
	} {
		dir := filepath.Join(t.TempDir(), "r")
		_, err := Restore(context.Background(), bytes.NewReader(tc.raw), dir, store.Options{})
		if !errors.Is(err, ErrInvalid) {
			t.Errorf("Restore(%s) = %v, want ErrInvalid", tc.name, err)
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 0 {
			t.Errorf("Restore(%s) left %d entries in the folder", tc.name, len(entries))
		}
	}
}

// FuzzVerify: any bytes are read without a panic; a restore of them that fails leaves the
// folder empty.
func FuzzVerify(f *testing.F) {
	f.Add(sample(f))
	f.Add(archive([2]string{manifestName, `{"format":1,"backend":"badger"}`}, [2]string{dbName, ""}))
	f.Add([]byte{0x1f, 0x8b})
	f.Fuzz(func(t *testing.T, raw []byte) {
		if _, err := Verify(bytes.NewReader(raw)); err != nil {
			return
		}
		dir := filepath.Join(t.TempDir(), "r")
		if _, err := Restore(context.Background(), bytes.NewReader(raw), dir, store.Options{}); err != nil {
			if entries, _ := os.ReadDir(dir); len(entries) != 0 {
				t.Errorf("Restore = %v and left %d entries in the folder", err, len(entries))
			}
		}
	})
}
