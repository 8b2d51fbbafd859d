package forms_test

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// The inbox as CSV (Accept: text/csv): a header of id, createdAt, ip, userAgent and the form's
// fields; one RFC 4180 row per submission, newest first, with file links; hostile values stay
// data (quotes, commas, newlines, formulas).
func TestInboxCSV(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	body, ctype := multipartBody(t, part{name: "email", value: "first@example.com"}, part{name: "message", value: "a \"quoted\", two-line\nmessage"},
		part{name: "photo", filename: "p.png", ctype: "image/png", data: pngBytes})
	r := e.Do("POST", submit, body, "X-API-Key", "pk_live_demo_web", "Content-Type", ctype, "User-Agent", "=cmd|' /C calc'!A0")
	if r.Status != 201 {
		t.Fatalf("submit = %d %s", r.Status, r.Body)
	}
	var first struct{ ID string }
	_ = json.Unmarshal(r.Body, &first)
	e.clock.Add(1e9)
	if r := e.Do("POST", submit, map[string]any{"email": "n@example.com", "message": "=1+1", "age": 7, "tags": []string{"a", "c"}, "agree": true}, "X-API-Key", "pk_live_demo_web"); r.Status != 201 {
		t.Fatalf("submit = %d %s", r.Status, r.Body)
	}
	r = e.Do("GET", "/admin/v1/projects/demo/forms/contact/submissions", nil, "Authorization", "Bearer test-admin-token", "Accept", "text/csv")
	if r.Status != 200 || !strings.HasPrefix(r.Header.Get("Content-Type"), "text/csv") || !strings.Contains(r.Header.Get("Content-Disposition"), "attachment") {
		t.Fatalf("CSV inbox = %d %v %s", r.Status, r.Header, r.Body)
	}
	if !bytes.Contains(r.Body, []byte("\r\n")) {
		t.Errorf("CSV lines do not end with CRLF (RFC 4180)")
	}
	rows, err := csv.NewReader(bytes.NewReader(r.Body)).ReadAll()
	if err != nil {
		t.Fatalf("CSV does not parse: %v\n%s", err, r.Body)
	}
	want := []string{"id", "createdAt", "ip", "userAgent", "email", "message", "age", "topic", "tags", "agree", "photo"}
	if strings.Join(rows[0], ",") != strings.Join(want, ",") {
		t.Errorf("header = %v, want %v", rows[0], want)
	}
	if len(rows) != 3 {
		t.Fatalf("rows = %d, want header + 2: %q", len(rows), rows)
	}
	newest, oldest := rows[1], rows[2]
	if newest[5] != "'=1+1" || newest[6] != "7" || newest[8] != "a, c" || newest[9] != "true" || newest[10] != "" {
		t.Errorf("newest row = %q", newest)
	}
	if oldest[0] != first.ID || oldest[3] != "'=cmd|' /C calc'!A0" || oldest[5] != "a \"quoted\", two-line\nmessage" ||
		!strings.HasSuffix(oldest[10], "/admin/v1/projects/demo/forms/contact/submissions/"+first.ID+"/files/0") {
		t.Errorf("oldest row = %q", oldest)
	}
	// JSON stays the default, for */* and no Accept.
	for _, accept := range []string{"", "*/*", "application/json, text/csv;q=0.5"} {
		r := e.Do("GET", "/admin/v1/projects/demo/forms/contact/submissions", nil, "Authorization", "Bearer test-admin-token", "Accept", accept)
		if !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
			t.Errorf("Accept %q: Content-Type %q, want JSON", accept, r.Header.Get("Content-Type"))
		}
	}
	if r := e.Do("GET", "/admin/v1/projects/demo/forms/nope/submissions", nil, "Authorization", "Bearer test-admin-token", "Accept", "text/csv"); r.Status != 404 || r.Code() != "FORM_NOT_FOUND" {
		t.Errorf("CSV of an unknown form = %d %s", r.Status, r.Body)
	}
}

// DELETE .../submissions/{id} removes the submission and its file's bytes; ids of another form
// or project, and a second delete, are 404.
func TestDeleteSubmission(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	body, ctype := multipartBody(t, part{name: "email", value: "first@example.com"}, part{name: "message", value: "m"},
		part{name: "photo", filename: "p.png", ctype: "image/png", data: pngBytes})
	r := e.Do("POST", submit, body, "X-API-Key", "pk_live_demo_web", "Content-Type", ctype)
	var sub struct{ ID string }
	_ = json.Unmarshal(r.Body, &sub)
	base := "/projects/demo/forms/contact/submissions/" + sub.ID
	if r := e.Admin("GET", base+"/files/0", nil); r.Status != 200 || !bytes.Equal(r.Body, pngBytes) {
		t.Fatalf("file before delete = %d", r.Status)
	}
	if n := countFiles(t, e.Dir+"/blobs"); n != 1 {
		t.Fatalf("%d blob files before the delete, want 1", n)
	}
	for _, path := range []string{"/projects/demo/forms/other/submissions/" + sub.ID, "/projects/ts/forms/contact/submissions/" + sub.ID, base + "x", "/projects/demo/forms/contact/submissions/..%2F..%2Fx"} {
		if r := e.Admin("DELETE", path, nil); r.Status != 404 {
			t.Errorf("DELETE %s = %d %s, want 404", path, r.Status, r.Body)
		}
	}
	if r := e.Admin("DELETE", base, nil); r.Status != 204 {
		t.Fatalf("DELETE = %d %s", r.Status, r.Body)
	}
	for _, path := range []string{base, base + "/files/0"} {
		if r := e.Admin("GET", path, nil); r.Status != 404 {
			t.Errorf("GET %s after delete = %d, want 404", path, r.Status)
		}
	}
	if r := e.Admin("DELETE", base, nil); r.Status != 404 || r.Code() != "SUBMISSION_NOT_FOUND" {
		t.Errorf("second DELETE = %d %s", r.Status, r.Body)
	}
	if got := e.Admin("GET", "/projects/demo/forms/contact/submissions", nil).JSON(t)["items"].([]any); len(got) != 0 {
		t.Errorf("inbox after delete = %v", got)
	}
	if n := countFiles(t, e.Dir+"/blobs"); n != 0 {
		t.Errorf("%d blob files left after the delete", n)
	}
}

// countFiles counts the regular files under dir (the local blob store).
func countFiles(t *testing.T, dir string) int {
	t.Helper()
	n := 0
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			n++
		}
		return err
	})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	return n
}
