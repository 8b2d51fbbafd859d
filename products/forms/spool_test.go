package forms

import (
	"fmt"
	"io"
	"mime/multipart"
	"net/textproto"
	"runtime"
	"testing"
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
	sp, err := decodeMultipart(pr, w.Boundary(), dir, Admission{c: c}.FieldKind, nil)
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
