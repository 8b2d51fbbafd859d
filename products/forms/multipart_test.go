package forms_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/textproto"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// photo is a PNG of size bytes: the signature and header of pngBytes, then a deterministic
// filler (the sniffer only reads the start).
type photo struct {
	size int64
	seed byte
}

func (p photo) reader() io.Reader {
	return io.MultiReader(bytes.NewReader(pngBytes[:33]), io.LimitReader(filler{p.seed}, p.size-33))
}

func (p photo) sum() [32]byte {
	h := sha256.New()
	_, _ = io.Copy(h, p.reader())
	var s [32]byte
	copy(s[:], h.Sum(nil))
	return s
}

type filler struct{ b byte }

func (f filler) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = f.b + byte(i%7)
	}
	return len(p), nil
}

// streamedBody writes a multipart body through a pipe, so the test never holds it whole.
func streamedBody(write func(w *multipart.Writer) error) (io.Reader, string) {
	pr, pw := io.Pipe()
	w := multipart.NewWriter(pw)
	go func() {
		err := write(w)
		if err == nil {
			err = w.Close()
		}
		pw.CloseWithError(err)
	}()
	return pr, w.FormDataContentType()
}

func filePart(w *multipart.Writer, field, name string, p photo) error {
	h := textproto.MIMEHeader{}
	h.Set("Content-Disposition", fmt.Sprintf(`form-data; name=%q; filename=%q`, field, name))
	h.Set("Content-Type", "image/png")
	pw, err := w.CreatePart(h)
	if err != nil {
		return err
	}
	_, err = io.Copy(pw, p.reader())
	return err
}

// TestLargeMultipartIsSpooled: two 4.9 MB photos are stored byte for byte, and the temporary
// files that held them while the submission was checked are gone once it answered, accepted
// or refused.
func TestLargeMultipartIsSpooled(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	front, back := photo{size: 49 << 20 / 10, seed: 1}, photo{size: 49 << 20 / 10, seed: 2}
	body, ctype := streamedBody(func(w *multipart.Writer) error {
		if err := w.WriteField("caption", "two sides"); err != nil {
			return err
		}
		if err := filePart(w, "front", "front.png", front); err != nil {
			return err
		}
		return filePart(w, "back", "back.png", back)
	})
	r := e.Do("POST", "/forms/forms/gallery/submit", body, "X-API-Key", "pk_live_demo_web", "Content-Type", ctype)
	if r.Status != 201 {
		t.Fatalf("two 4.9 MB photos = %d %s, want 201", r.Status, r.Body)
	}
	var rc struct{ ID string }
	_ = json.Unmarshal(r.Body, &rc)
	for i, p := range []photo{front, back} {
		f := e.Admin("GET", fmt.Sprintf("/projects/demo/forms/gallery/submissions/%s/files/%d", rc.ID, i), nil)
		if f.Status != 200 || int64(len(f.Body)) != p.size || sha256.Sum256(f.Body) != p.sum() {
			t.Errorf("file %d: %d, %d bytes, want 200 and the %d bytes sent", i, f.Status, len(f.Body), p.size)
		}
	}
	// Refused after the first file was spooled: the second is larger than 5 MB.
	body, ctype = streamedBody(func(w *multipart.Writer) error {
		if err := filePart(w, "front", "front.png", front); err != nil {
			return err
		}
		return filePart(w, "back", "back.png", photo{size: 5<<20 + 1, seed: 3})
	})
	if r := e.Do("POST", "/forms/forms/gallery/submit", body, "X-API-Key", "pk_live_demo_web", "Content-Type", ctype); r.Status != 413 {
		t.Errorf("a 5 MB + 1 photo = %d %s, want 413", r.Status, r.Body)
	}
	// Chunked (no declared length): three 4.9 MB photos pass the 10 MB limit while being read.
	body, ctype = streamedBody(func(w *multipart.Writer) error {
		for _, f := range []string{"front", "back", "back"} {
			if err := filePart(w, f, f+".png", front); err != nil {
				return err
			}
		}
		return nil
	})
	if r := e.Do("POST", "/forms/forms/gallery/submit", body, "X-API-Key", "pk_live_demo_web", "Content-Type", ctype); r.Status != 413 {
		t.Errorf("a chunked 14.7 MB body = %d %s, want 413", r.Status, r.Body)
	}
	left, _ := filepath.Glob(filepath.Join(e.Dir, "spool", "*"))
	if len(left) != 0 {
		t.Errorf("spooled parts left after the answers: %v", left)
	}
}

// TestSpoolCleanedAtStart: parts a crash left in the spool folder are removed when the service
// starts; other files there are not touched.
func TestSpoolCleanedAtStart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	spool := filepath.Join(dir, "spool")
	if err := os.MkdirAll(spool, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"part-123", "part-456", "keep.txt"} {
		if err := os.WriteFile(filepath.Join(spool, n), []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	startIn(t, dir, nil)
	left, _ := filepath.Glob(filepath.Join(spool, "*"))
	if len(left) != 1 || filepath.Base(left[0]) != "keep.txt" {
		t.Errorf("spool folder after start = %v, want only keep.txt", left)
	}
}

// TestMultipartPartsRefused: a part without a name, and a file part for a field that takes
// no files, are 400 VALIDATION_FAILED naming the part; JSON posted as urlencoded (curl -d's
// default) is told to send Content-Type: application/json.
func TestMultipartPartsRefused(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	raw := func(parts ...string) (io.Reader, string) {
		var b strings.Builder
		for _, p := range parts {
			b.WriteString("--B\r\n" + p + "\r\n")
		}
		b.WriteString("--B--\r\n")
		return strings.NewReader(b.String()), "multipart/form-data; boundary=B"
	}
	email := "Content-Disposition: form-data; name=\"email\"\r\n\r\na@example.com"
	msg := "Content-Disposition: form-data; name=\"message\"\r\n\r\nhi"
	tests := []struct {
		name       string
		parts      []string
		field, has string
	}{
		{"part without a name", []string{email, "Content-Disposition: form-data\r\n\r\nvalue", msg}, "parts[1]", "has no name"},
		{"file part without a name", []string{email, msg, "Content-Disposition: form-data; filename=\"a.png\"\r\nContent-Type: image/png\r\n\r\n" + string(pngBytes)}, `parts[2] (file "a.png")`, "has no name"},
		{"part without a disposition", []string{"Content-Type: text/plain\r\n\r\nvalue"}, "parts[0]", "has no name"},
		{"file part on a text field", []string{email, "Content-Disposition: form-data; name=\"message\"; filename=\"m.png\"\r\nContent-Type: image/png\r\n\r\n" + string(pngBytes)}, "message", `parts[1] (file "m.png") is a file part`},
	}
	for _, tc := range tests {
		body, ctype := raw(tc.parts...)
		r := e.Do("POST", submit, body, "X-API-Key", "pk_live_demo_web", "Content-Type", ctype)
		var got struct {
			Error   string
			Details []struct{ Field, Problem string }
		}
		_ = json.Unmarshal(r.Body, &got)
		if r.Status != 400 || got.Error != "VALIDATION_FAILED" || len(got.Details) != 1 || got.Details[0].Field != tc.field || !strings.Contains(got.Details[0].Problem, tc.has) {
			t.Errorf("%s = %d %s, want 400 VALIDATION_FAILED on %s (%q)", tc.name, r.Status, r.Body, tc.field, tc.has)
		}
	}

	for _, body := range []string{`{"data":{"email":"a@example.com","message":"hi"}}`, ` [1]`, `{"email":`} {
		r := e.Do("POST", submit, strings.NewReader(body), "X-API-Key", "pk_live_demo_web", "Content-Type", "application/x-www-form-urlencoded")
		if r.Status != 400 || r.Code() != "VALIDATION_FAILED" || !strings.Contains(string(r.Body), "Content-Type: application/json") {
			t.Errorf("urlencoded %s = %d %s, want 400 VALIDATION_FAILED telling to send Content-Type: application/json", body, r.Status, r.Body)
		}
	}
	// The same body as JSON is accepted.
	r := e.Do("POST", submit, strings.NewReader(`{"data":{"email":"a@example.com","message":"hi"}}`), "X-API-Key", "pk_live_demo_web", "Content-Type", "application/json")
	if r.Status != 201 {
		t.Errorf("the same body as JSON = %d %s", r.Status, r.Body)
	}
}
