package backup

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/gatehouse-dev/gatehouse/edge/blob"
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
	local, err := blob.NewLocal(blobs)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := Write(ctx, &buf, Source{DB: db, Blobs: local, BlobsKind: "local", TempDir: dir, Version: "test"}); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// target opens an empty badger store and a local blob folder in a temporary folder.
func target(t testing.TB) (Target, string) {
	t.Helper()
	dir := t.TempDir()
	db, err := store.Open(store.Options{Dir: filepath.Join(dir, "db")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	blobs, err := blob.NewLocal(filepath.Join(dir, "blobs"))
	if err != nil {
		t.Fatal(err)
	}
	return Target{DB: db, Blobs: blobs}, dir
}

func TestWriteRestore(t *testing.T) {
	raw := sample(t)
	m, err := Verify(bytes.NewReader(raw))
	if err != nil || m.Format != FormatVersion || m.Backend != "badger" || m.Version != "test" || m.Blobs != "local" || m.BlobCount != 2 {
		t.Fatalf("Verify = %+v, %v", m, err)
	}
	tg, dir := target(t)
	if err := CheckEmpty(context.Background(), tg.DB); err != nil {
		t.Fatalf("CheckEmpty(a new store) = %v", err)
	}
	if _, err := Restore(context.Background(), bytes.NewReader(raw), tg); err != nil {
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
	_ = tg.DB.View(context.Background(), func(tx *store.Txn) error {
		if v, err := tx.Get([]byte("b")); err != nil || string(v) != "2" {
			t.Errorf("restored Get(b) = %q, %v", v, err)
		}
		return nil
	})
	// The restored store is no longer empty; Clear empties it.
	if err := CheckEmpty(context.Background(), tg.DB); !errors.Is(err, ErrNotEmpty) {
		t.Errorf("CheckEmpty(a restored store) = %v, want ErrNotEmpty", err)
	}
	if err := Clear(context.Background(), tg.DB); err != nil {
		t.Fatal(err)
	}
	if err := CheckEmpty(context.Background(), tg.DB); err != nil {
		t.Errorf("CheckEmpty after Clear = %v", err)
	}
	if err := CheckEmptyDir(dir); !errors.Is(err, ErrNotEmpty) {
		t.Errorf("CheckEmptyDir(a full folder) = %v, want ErrNotEmpty", err)
	}
	if err := CheckEmptyDir(filepath.Join(dir, "new")); err != nil {
		t.Errorf("CheckEmptyDir(a missing folder) = %v", err)
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
		{"other backend", archive([2]string{manifestName, `{"format":1,"backend":"mysql"}`}, [2]string{dbName, ""})},
		{"no database", archive(manifest)},
		{"two databases", archive(manifest, [2]string{dbName, ""}, [2]string{dbName, ""})},
		{"blob escaping the folder", archive(manifest, [2]string{dbName, ""}, [2]string{"blobs/../../etc/x", "x"})},
		{"unknown entry", archive(manifest, [2]string{dbName, ""}, [2]string{"other", "x"})},
	} {
		if _, err := Verify(bytes.NewReader(tc.raw)); !errors.Is(err, ErrInvalid) {
			t.Errorf("Verify(%s) = %v, want ErrInvalid", tc.name, err)
		}
		tg, _ := target(t)
		if _, err := Restore(context.Background(), bytes.NewReader(tc.raw), tg); !errors.Is(err, ErrInvalid) {
			t.Errorf("Restore(%s) = %v, want ErrInvalid", tc.name, err)
		}
	}
	// An archive with blob files and a target without a blob store.
	tg, _ := target(t)
	tg.Blobs = nil
	if _, err := Restore(context.Background(), bytes.NewReader(good), tg); !errors.Is(err, ErrInvalid) {
		t.Errorf("Restore(blobs, no blob store) = %v, want ErrInvalid", err)
	}
}

// FuzzVerify: any bytes are read without a panic, and an archive Verify accepts is restored
// into an empty store without one (random bytes for a database stream fail in Load).
func FuzzVerify(f *testing.F) {
	f.Add(sample(f))
	f.Add(archive([2]string{manifestName, `{"format":1,"backend":"badger"}`}, [2]string{dbName, ""}))
	f.Add(archive([2]string{manifestName, `{"format":1,"backend":"postgres"}`}, [2]string{dbName, ""}, [2]string{"blobs/a/b", "x"}))
	f.Add([]byte{0x1f, 0x8b})
	f.Fuzz(func(t *testing.T, raw []byte) {
		if _, err := Verify(bytes.NewReader(raw)); err != nil {
			return
		}
		db, err := store.Open(store.Options{InMemory: true})
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		blobs, err := blob.NewLocal(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		_, _ = Restore(context.Background(), bytes.NewReader(raw), Target{DB: db, Blobs: blobs})
	})
}

// BenchmarkWrite measures the archive of a store of 50,000 keys of 200 bytes (about 10 MB of
// incompressible values): b.SetBytes makes the result read as MB/s of values archived.
func BenchmarkWrite(b *testing.B) {
	dir := b.TempDir()
	db, err := store.Open(store.Options{Dir: filepath.Join(dir, "db")})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	const keys, size = 50000, 200
	batch := db.NewBatch()
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < keys; i++ {
		val := make([]byte, size) // the batch keeps the slice until it commits
		for j := range val {
			val[j] = byte(rng.Uint32())
		}
		if err := batch.Set([]byte(fmt.Sprintf("records/p/c/%08d", i)), val); err != nil {
			b.Fatal(err)
		}
	}
	if err := batch.Flush(); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(keys * size)
	b.ResetTimer()
	var n int
	for i := 0; i < b.N; i++ {
		var buf bytes.Buffer
		if err := Write(context.Background(), &buf, Source{DB: db, TempDir: dir}); err != nil {
			b.Fatal(err)
		}
		n = buf.Len()
	}
	b.ReportMetric(float64(n), "archive-bytes")
}
