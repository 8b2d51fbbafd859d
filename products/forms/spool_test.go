package forms

import (
	"fmt"
	"io"
	"mime/multipart"
	"net/textproto"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/gatehouse-dev/gatehouse/edge/blob"
	"github.com/gatehouse-dev/gatehouse/edge/edgetest/storetest"
	"github.com/gatehouse-dev/gatehouse/edge/store"
)

// zeros reads n zero bytes without holding them.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// TestDecodeMultipartMemory: decoding a 9.8 MB body of two file parts allocates a small,
// fixed amount, whatever the size of the parts (they go to files as they arrive). The bound
// is on bytes allocated, not on time: the whole-body decoder this replaced allocated more
// than twice the body.
func TestDecodeMultipartMemory(t *testing.T) {
	c := compile("p", Form{Slug: "g", Published: true, Fields: []FormField{
		{Name: "front", Type: "file"}, {Name: "back", Type: "file"},
	}}, nil)
	const partSize = 49 << 20 / 10
	pr, pw := io.Pipe()
	w := multipart.NewWriter(pw)
	go func() {
		var err error
		for _, f := range []string{"front", "back"} {
			h := textproto.MIMEHeader{}
			h.Set("Content-Disposition", fmt.Sprintf(`form-data; name=%q; filename="%s.png"`, f, f))
			h.Set("Content-Type", "image/png")
			var part io.Writer
			if part, err = w.CreatePart(h); err != nil {
				break
			}
			if _, err = io.Copy(part, io.LimitReader(zeros{}, partSize)); err != nil {
				break
			}
		}
		if err == nil {
			err = w.Close()
		}
		pw.CloseWithError(err)
	}()
	dir := t.TempDir()
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	sp, err := decodeMultipart(pr, w.Boundary(), dir, spoolPrefix, Admission{c: c}.FieldKind, nil)
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	defer sp.Remove()
	if n := len(sp.Files["front"]) + len(sp.Files["back"]); n != 2 || sp.Files["back"][0].Size != partSize {
		t.Fatalf("decoded %d files (%+v), want two of %d bytes", n, sp.Files, partSize)
	}
	const bound = 1 << 20
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > bound {
		t.Errorf("decoding two %d-byte parts allocated %d bytes, want at most %d", partSize, alloc, bound)
	}
}

// TestPartHeaderBounded: a part whose headers run past 64 KB is refused before mime/multipart
// buffers them (it accepts 10 MB and allocated 61 MB for a 9 MB header line); headers under
// the bound, and delimiters split across reads of any size, pass.
func TestPartHeaderBounded(t *testing.T) {
	c := compile("p", Form{Slug: "g", Published: true, Fields: []FormField{
		{Name: "front", Type: "file"}, {Name: "note", Type: "text"},
	}}, nil)
	part := func(pad int) string {
		return "--BOUNDARY\r\nContent-Disposition: form-data; name=\"front\"; filename=\"a.png\"\r\nX-Pad: " +
			strings.Repeat("a", pad) + "\r\n\r\n\x89PNG\r\n\x1a\n\r\n--BOUNDARY\r\n" +
			"Content-Disposition: form-data; name=\"note\"\r\n\r\nhi --BOUNDAR\r\n--BOUNDARY--\r\n"
	}
	bomb := part(9 << 20)
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := decodeMultipart(strings.NewReader(bomb), "BOUNDARY", t.TempDir(), spoolPrefix, Admission{c: c}.FieldKind, nil)
	runtime.ReadMemStats(&after)
	if err == nil || !strings.Contains(err.Error(), "longer than 64 KB") {
		t.Errorf("a 9 MB part header: %v, want refused as longer than 64 KB", err)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 1<<20 {
		t.Errorf("refusing a 9 MB part header allocated %d bytes, want at most 1 MB", alloc)
	}
	for _, tc := range []struct {
		name string
		r    io.Reader
	}{
		{"whole", strings.NewReader(part(60 << 10))},
		{"one byte at a time", iotest.OneByteReader(strings.NewReader(part(100)))},
		{"half reads", iotest.HalfReader(strings.NewReader(part(60 << 10)))},
	} {
		sp, err := decodeMultipart(tc.r, "BOUNDARY", t.TempDir(), spoolPrefix, Admission{c: c}.FieldKind, nil)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if len(sp.Files["front"]) != 1 || sp.Values["note"] != "hi --BOUNDAR" {
			t.Errorf("%s: decoded %+v %+v", tc.name, sp.Files, sp.Values)
		}
		sp.Remove()
	}
}

// TestStartKeepsPartsOfThisRun: Start runs after the server listens (a component), so a
// submission may be spooling its file parts meanwhile. Start removes the parts an earlier run
// left and none of this run's: the submission in flight keeps its file, byte for byte.
func TestStartKeepsPartsOfThisRun(t *testing.T) {
	t.Parallel()
	db, err := storetest.Open(t, store.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	blobs, err := blob.NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "spool")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"part-123", "part-0badc0de-456", "keep.txt"} { // an earlier run's parts, and a stranger
		if err := os.WriteFile(filepath.Join(dir, n), []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	s, err := NewService(Options{DB: db, Blobs: blobs, SpoolDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	body := "--B\r\nContent-Disposition: form-data; name=\"front\"; filename=\"a.png\"\r\nContent-Type: image/png\r\n\r\n" +
		"in flight\r\n--B--\r\n"
	c := compile("p", Form{Slug: "g", Published: true, Fields: []FormField{{Name: "front", Type: "file"}}}, nil)
	sp, err := s.decodeMultipart(strings.NewReader(body), "B", Admission{c: c})
	if err != nil {
		t.Fatal(err)
	}
	defer sp.Remove()
	if err := s.Start(t.Context()); err != nil {
		t.Fatalf("Start: %v", err)
	}
	left, _ := filepath.Glob(filepath.Join(dir, "*"))
	if len(left) != 2 || filepath.Base(left[0]) != "keep.txt" || !strings.HasPrefix(filepath.Base(left[1]), s.spoolPart) {
		t.Errorf("spool folder after Start = %v, want this run's part (%s*) and keep.txt", left, s.spoolPart)
	}
	r, err := sp.Files["front"][0].Open()
	if err != nil {
		t.Fatalf("opening the part of the submission in flight after Start: %v", err)
	}
	defer r.Close()
	if got, _ := io.ReadAll(r); string(got) != "in flight" {
		t.Errorf("the part of the submission in flight reads %q after Start, want %q", got, "in flight")
	}
}
