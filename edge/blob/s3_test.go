package blob

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
)

// newFakeS3 starts gofakes3, a real S3 protocol server (in-process, memory backend), on
// loopback with one bucket, and returns an S3 store on it.
func newFakeS3(t testing.TB) *S3 {
	t.Helper()
	backend := s3mem.New()
	if err := backend.CreateBucket("assets"); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(gofakes3.New(backend).Server())
	t.Cleanup(srv.Close)
	s, err := NewS3(context.Background(), S3Options{
		Endpoint: strings.TrimPrefix(srv.URL, "http://"), Bucket: "assets", Region: "us-east-1",
		AccessKey: "test", SecretKey: "test-secret",
	})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestS3Conformance(t *testing.T) {
	t.Parallel()
	conformance(t, newFakeS3(t))
}

func TestLocalConformance(t *testing.T) {
	t.Parallel()
	s, err := NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	conformance(t, s)
}

func TestS3MissingBucket(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(gofakes3.New(s3mem.New()).Server())
	defer srv.Close()
	_, err := NewS3(context.Background(), S3Options{Endpoint: strings.TrimPrefix(srv.URL, "http://"), Bucket: "nope", AccessKey: "a", SecretKey: "b"})
	if err == nil {
		t.Error("NewS3 with a missing bucket succeeded")
	}
}

type failingReader struct{ n int }

func (f *failingReader) Read(p []byte) (int, error) {
	if f.n <= 0 {
		return 0, errors.New("client went away")
	}
	k := min(len(p), f.n)
	f.n -= k
	return k, nil
}

// conformance checks what products rely on, for any Store.
func conformance(t *testing.T, s Store) {
	ctx := context.Background()
	data := bytes.Repeat([]byte("0123456789"), 70_000) // 700 KB
	for _, tc := range []struct {
		name string
		r    func() io.Reader
	}{
		{"sized", func() io.Reader { return SizedReader(bytes.NewReader(data), int64(len(data))) }},
		{"unsized", func() io.Reader { return io.MultiReader(bytes.NewReader(data)) }},
	} {
		key := "acme/originals/ast_" + tc.name + "/a.png"
		n, err := s.Put(ctx, key, tc.r(), "image/png")
		if err != nil || n != int64(len(data)) {
			t.Fatalf("%s: Put = %d, %v", tc.name, n, err)
		}
		o, err := s.Open(ctx, key)
		if err != nil {
			t.Fatalf("%s: Open: %v", tc.name, err)
		}
		if o.Size() != int64(len(data)) {
			t.Errorf("%s: Size = %d", tc.name, o.Size())
		}
		if _, err := o.Seek(123_456, io.SeekStart); err != nil {
			t.Fatal(err)
		}
		part := make([]byte, 100)
		if _, err := io.ReadFull(o, part); err != nil || !bytes.Equal(part, data[123_456:123_556]) {
			t.Errorf("%s: read after Seek = %q, %v", tc.name, part[:10], err)
		}
		o.Close()
		if err := s.Delete(ctx, key); err != nil {
			t.Fatalf("%s: Delete: %v", tc.name, err)
		}
		if _, err := s.Open(ctx, key); !errors.Is(err, ErrNotFound) {
			t.Errorf("%s: Open after Delete = %v, want ErrNotFound", tc.name, err)
		}
	}
	if err := s.Delete(ctx, "acme/never/there"); err != nil {
		t.Errorf("Delete of a missing key = %v", err)
	}
	// A body that fails half-way leaves no object behind.
	if _, err := s.Put(ctx, "acme/broken", SizedReader(&failingReader{n: 50_000}, 100_000), "image/png"); err == nil {
		t.Error("Put of a failing reader succeeded")
	}
	if _, err := s.Open(ctx, "acme/broken"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Open of a failed Put = %v, want ErrNotFound", err)
	}
	if _, err := s.Put(ctx, "../escape", strings.NewReader("x"), ""); !errors.Is(err, ErrBadKey) {
		t.Errorf("Put ../escape = %v, want ErrBadKey", err)
	}
}

// TestList: both backends list every complete object with its size, in key order, and not the
// temporary file of a write in progress.
func TestList(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	local, err := NewLocal(dir)
	if err != nil {
		t.Fatal(err)
	}
	for name, s := range map[string]interface {
		Store
		List(context.Context, func(string, int64) error) error
	}{"local": local, "s3": newFakeS3(t)} {
		ctx := context.Background()
		for _, k := range []string{"p/b/2.txt", "p/a.png", "q/x"} {
			if _, err := s.Put(ctx, k, strings.NewReader(k), "text/plain"); err != nil {
				t.Fatal(err)
			}
		}
		if name == "local" {
			if err := os.WriteFile(filepath.Join(dir, "p", ".upload-123"), []byte("partial"), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		var got []string
		if err := s.List(ctx, func(k string, size int64) error {
			got = append(got, fmt.Sprintf("%s:%d", k, size))
			return nil
		}); err != nil {
			t.Fatalf("%s: List: %v", name, err)
		}
		if want := "p/a.png:7 p/b/2.txt:9 q/x:3"; strings.Join(got, " ") != want {
			t.Errorf("%s: List = %v, want %s", name, got, want)
		}
		stop := errors.New("stop")
		n := 0
		if err := s.List(ctx, func(string, int64) error { n++; return stop }); !errors.Is(err, stop) || n != 1 {
			t.Errorf("%s: List stopping at the first object = %v after %d calls", name, err, n)
		}
	}
}

// DeletePrefix removes the objects under a folder, at any depth, and nothing beside it (not
// a key that only starts with the same letters); an empty or missing folder is no error, a bad
// key is refused.
func TestDeletePrefix(t *testing.T) {
	t.Parallel()
	local, err := NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for name, s := range map[string]interface {
		Store
		PrefixDeleter
		List(context.Context, func(string, int64) error) error
	}{"local": local, "s3": newFakeS3(t)} {
		ctx := context.Background()
		for _, k := range []string{"o/variants/a1/x.webp", "o/variants/a1/y/z.jpg", "o/variants/a10/x.webp", "o/originals/a1/p.jpg"} {
			if _, err := s.Put(Remakeable(ctx), k, strings.NewReader(k), "image/webp"); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.DeletePrefix(ctx, "o/variants/a1"); err != nil {
			t.Fatalf("%s: DeletePrefix: %v", name, err)
		}
		var got []string
		if err := s.List(ctx, func(k string, _ int64) error { got = append(got, k); return nil }); err != nil {
			t.Fatal(err)
		}
		if want := "o/originals/a1/p.jpg o/variants/a10/x.webp"; strings.Join(got, " ") != want {
			t.Errorf("%s: after DeletePrefix: %v, want %s", name, got, want)
		}
		if err := s.DeletePrefix(ctx, "o/variants/none"); err != nil {
			t.Errorf("%s: DeletePrefix of a missing folder = %v", name, err)
		}
		if err := s.DeletePrefix(ctx, "../o"); !errors.Is(err, ErrBadKey) {
			t.Errorf("%s: DeletePrefix(../o) = %v, want ErrBadKey", name, err)
		}
	}
}
