package files_test

import (
	"bytes"
	"strings"
	"testing"
)

// PATCH /admin/v1/assets/{id} edits title, alt and tags; the public read shows them.
func TestAdminEditAsset(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	id := e.upload(t, secret, "a.png", "image/png", pngBytes(t, 4, 3))
	r := e.Admin("PATCH", "/assets/"+id, map[string]any{"title": "Red dot", "alt": "A red dot on white", "tags": []string{" red ", "dot", "red"}})
	m := r.JSON(t)
	if r.Status != 200 || m["title"] != "Red dot" || m["alt"] != "A red dot on white" || len(m["tags"].([]any)) != 2 {
		t.Fatalf("PATCH = %d %s", r.Status, r.Body)
	}
	pubView := e.Do("GET", "/files/assets/"+id, nil, "X-API-Key", pub).JSON(t)
	if pubView["alt"] != "A red dot on white" || pubView["title"] != "Red dot" {
		t.Errorf("public read after PATCH = %v", pubView)
	}
	// Absent fields stay; null clears.
	r = e.Admin("PATCH", "/assets/"+id, map[string]any{"title": nil})
	if m := r.JSON(t); r.Status != 200 || m["title"] != nil || m["alt"] != "A red dot on white" {
		t.Errorf("PATCH title null = %d %s", r.Status, r.Body)
	}
	for _, tc := range []struct{ name, body string }{
		{"unknown field", `{"filename":"x.png"}`},
		{"number title", `{"title":5}`},
		{"tags not array", `{"tags":"a"}`},
		{"empty tag", `{"tags":[""]}`},
		{"two-line tag", `{"tags":["a\nb"]}`},
		{"too many tags", `{"tags":[` + manyTags(51) + `]}`},
		{"long alt", `{"alt":"` + strings.Repeat("a", 2001) + `"}`},
		{"invalid UTF-8", "{\"alt\":\"\xff\"}"},
		{"duplicate keys", `{"alt":"a","alt":"b"}`},
		{"array body", `[]`},
	} {
		if r := e.Do("PATCH", "/admin/v1/assets/"+id, tc.body, "Authorization", "Bearer test-admin-token"); r.Status != 400 {
			t.Errorf("%s: PATCH = %d %s, want 400", tc.name, r.Status, r.Body)
		}
	}
	if r := e.Admin("PATCH", "/assets/ast_nope", map[string]any{"alt": "x"}); r.Status != 404 || r.Code() != "ASSET_NOT_FOUND" {
		t.Errorf("PATCH unknown = %d %s", r.Status, r.Body)
	}
}

// manyTags returns n distinct JSON strings, comma-separated.
func manyTags(n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`"t` + strings.Repeat("x", i%10) + string(rune('a'+i%26)) + string(rune('a'+i/26)) + `"`)
	}
	return b.String()
}

// DELETE /admin/v1/assets/{id} removes the asset and its bytes: the public URL, the public read
// and the listing answer without it; the duplicate check forgets its hash.
func TestAdminDeleteAsset(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	img := pngBytes(t, 4, 3)
	id := e.upload(t, secret, "a.png", "image/png", img)
	url := e.Do("GET", "/files/assets/"+id, nil, "X-API-Key", pub).JSON(t)["url"].(string)
	if r := e.Do("GET", url, nil); r.Status != 200 || !bytes.Equal(r.Body, img) {
		t.Fatalf("public URL before delete = %d", r.Status)
	}
	if r := e.Admin("DELETE", "/assets/"+id, nil); r.Status != 204 {
		t.Fatalf("DELETE = %d %s", r.Status, r.Body)
	}
	if r := e.Do("GET", url, nil); r.Status != 404 {
		t.Errorf("public URL after delete = %d, want 404", r.Status)
	}
	if r := e.Do("GET", "/files/assets/"+id, nil, "X-API-Key", pub); r.Status != 404 {
		t.Errorf("public read after delete = %d", r.Status)
	}
	if r := e.Do("GET", "/files/check-duplicate?hash="+sum(img), nil, "X-API-Key", pub); string(r.Body) != `{"isDuplicate":false}` {
		t.Errorf("check-duplicate after delete = %s", r.Body)
	}
	if r := e.Admin("GET", "/assets?org=acme", nil); strings.Contains(string(r.Body), id) {
		t.Errorf("listing after delete still has it: %s", r.Body)
	}
	if r := e.Admin("DELETE", "/assets/"+id, nil); r.Status != 404 {
		t.Errorf("second DELETE = %d", r.Status)
	}
	// A pending asset (no bytes yet) deletes too.
	slot := e.presign(t, secret, "b.png", "image/png", 10)
	if r := e.Admin("DELETE", "/assets/"+slot["assetId"].(string), nil); r.Status != 204 {
		t.Errorf("DELETE pending = %d %s", r.Status, r.Body)
	}
}

// A member of another org can neither read, edit nor delete an asset, and it is unchanged.
func TestAdminAssetsForeignOrg(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	img := pngBytes(t, 4, 3)
	id := e.upload(t, secret, "a.png", "image/png", img)
	s := e.User("owner@globex.test", "globex", "owner")
	for _, tc := range []struct {
		method string
		body   any
	}{{"GET", nil}, {"PATCH", map[string]any{"alt": "pwned"}}, {"DELETE", nil}} {
		if r := s.Do(tc.method, "/assets/"+id, tc.body); r.Status != 404 || r.Code() != "ASSET_NOT_FOUND" {
			t.Errorf("globex owner %s = %d %s, want 404 ASSET_NOT_FOUND", tc.method, r.Status, r.Body)
		}
	}
	if r := s.Do("GET", "/assets?org=acme", nil); r.Status != 404 {
		t.Errorf("globex owner listing acme = %d", r.Status)
	}
	a := e.Admin("GET", "/assets/"+id, nil).JSON(t)
	if a["alt"] != nil {
		t.Errorf("asset changed by a foreign member: %v", a)
	}
	url := e.Do("GET", "/files/assets/"+id, nil, "X-API-Key", pub).JSON(t)["url"].(string)
	if r := e.Do("GET", url, nil); r.Status != 200 {
		t.Errorf("public URL after foreign delete attempt = %d", r.Status)
	}
	// acme's own member may.
	m := e.User("member@acme.test", "acme", "member")
	if r := m.Do("PATCH", "/assets/"+id, map[string]any{"alt": "ok"}); r.Status != 200 {
		t.Errorf("acme member PATCH = %d %s", r.Status, r.Body)
	}
}
