package forms

import (
	"bytes"
	"mime/multipart"
	"strings"
	"testing"
)

// FuzzDecodeJSON: any body gives values or an API error, never a panic; values always pass
// through validate without a panic either.
func FuzzDecodeJSON(f *testing.F) {
	for _, s := range []string{`{"data":{"email":"a@b.co"}}`, `{"email":1,"tags":["a"]}`, `{"data":{"a":{"b":[1,2]}},"captcha-response":"x"}`, `[`, `null`, `{"n":1e999}`} {
		f.Add([]byte(s))
	}
	c := testForm()
	f.Fuzz(func(t *testing.T, body []byte) {
		v, err := decodeJSON(body)
		if err != nil {
			return
		}
		takeCaptcha(v)
		_, _ = validate(c, v, false, nil)
	})
}

// FuzzDecodeMultipart: malformed multipart bodies are errors, never panics, and every spooled
// file is removed.
func FuzzDecodeMultipart(f *testing.F) {
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	_ = w.SetBoundary("BOUNDARY")
	_ = w.WriteField("email", "a@example.com")
	fw, _ := w.CreateFormFile("file", "a.png")
	_, _ = fw.Write([]byte("\x89PNG\r\n\x1a\n"))
	_ = w.Close()
	f.Add(buf.Bytes())
	f.Add([]byte("--BOUNDARY\r\nContent-Disposition: form-data; name=\"x\"\r\n\r\nv\r\n--BOUNDARY--\r\n"))
	f.Add([]byte("--BOUNDARY\r\n\r\n"))
	f.Add([]byte("--BOUNDARY\r\nContent-Disposition: form-data; name=\"x\"\r\nX: " + strings.Repeat("a", 70<<10) + "\r\n\r\nv\r\n--BOUNDARY--"))
	c := testForm()
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, body []byte) {
		sp, err := decodeMultipart(bytes.NewReader(body), "BOUNDARY", dir, spoolPrefix, Admission{c: c}.FieldKind, nil)
		if err != nil {
			return
		}
		defer sp.Remove()
		takeCaptcha(sp.Values)
		_, _ = validate(c, sp.Values, true, sp.Files)
	})
}
