package files_test

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/edge"
	"github.com/gatehouse-dev/gatehouse/edge/config"
	"github.com/gatehouse-dev/gatehouse/edge/edgetest"
)

func (e *env) presign(t testing.TB, key, name, mime string, size int) map[string]any {
	t.Helper()
	r := e.Do("POST", "/files/upload/presigned", map[string]any{"filename": name, "mimeType": mime, "size": size}, "X-API-Key", key)
	if r.Status != 200 {
		t.Fatalf("presign %s %s: %d %s", name, mime, r.Status, r.Body)
	}
	return r.JSON(t)
}

func (e *env) put(t testing.TB, uploadURL string, body []byte, ctype string) *edgetest.Response {
	t.Helper()
	return e.Do("PUT", uploadURL, body, "Content-Type", ctype)
}

// upload runs presign, PUT and complete and returns the asset id.
func (e *env) upload(t testing.TB, key, name, mime string, body []byte) string {
	t.Helper()
	slot := e.presign(t, key, name, mime, len(body))
	if r := e.put(t, slot["uploadUrl"].(string), body, mime); r.Status != 200 {
		t.Fatalf("PUT %s: %d %s", name, r.Status, r.Body)
	}
	id := slot["assetId"].(string)
	if r := e.Do("POST", "/files/upload/complete", map[string]any{"assetId": id}, "X-API-Key", key); r.Status != 200 {
		t.Fatalf("complete %s: %d %s", name, r.Status, r.Body)
	}
	return id
}

func TestFullFlow(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	img := pngBytes(t, 40, 30)
	hash := sum(img)

	r := e.Do("GET", "/files/check-duplicate?hash="+hash, nil, "X-API-Key", pub)
	if r.Status != 200 || string(r.Body) != `{"isDuplicate":false}` {
		t.Fatalf("check-duplicate before = %d %s", r.Status, r.Body)
	}
	slot := e.presign(t, secret, "My Photo (1).png", "image/png", len(img))
	id := slot["assetId"].(string)
	if !strings.HasPrefix(id, "ast_") || len(id) != 30 {
		t.Errorf("assetId = %q", id)
	}
	if want := "acme/originals/" + id + "/My-Photo-1-.png"; slot["storageKey"] != want && slot["storageKey"] != "acme/originals/"+id+"/My-Photo-1.png" {
		t.Errorf("storageKey = %v", slot["storageKey"])
	}
	up, _ := url.Parse(slot["uploadUrl"].(string))
	if !strings.HasPrefix(slot["uploadUrl"].(string), e.URL+"/files/upload/"+id+"?") || up.Query().Get("sig") == "" {
		t.Errorf("uploadUrl = %v", slot["uploadUrl"])
	}
	exp, err := time.Parse(time.RFC3339, slot["expiresAt"].(string))
	if err != nil || exp.Sub(e.clock.Now()) > 900*time.Second || exp.Sub(e.clock.Now()) < 899*time.Second {
		t.Errorf("expiresAt = %v (now %v)", slot["expiresAt"], e.clock.Now())
	}
	if len(slot) != 4 {
		t.Errorf("slot has fields %v, want exactly assetId, storageKey, uploadUrl, expiresAt", slot)
	}

	got := e.Do("GET", "/files/assets/"+id, nil, "X-API-Key", pub).JSON(t)
	if got["status"] != "pending" || got["url"] != nil {
		t.Errorf("pending asset = %v", got)
	}
	r = e.Do("POST", "/files/upload/complete", map[string]any{"assetId": id}, "X-API-Key", secret)
	if r.Status != 409 || r.Code() != "UPLOAD_INCOMPLETE" {
		t.Errorf("complete before PUT = %d %s", r.Status, r.Body)
	}

	r = e.put(t, slot["uploadUrl"].(string), img, "image/png")
	if r.Status != 200 || r.JSON(t)["status"] != "pending" || r.JSON(t)["id"] != id {
		t.Fatalf("PUT = %d %s", r.Status, r.Body)
	}
	if r := e.put(t, slot["uploadUrl"].(string), img, "image/png"); r.Status != 409 || r.Code() != "UPLOAD_SLOT_USED" {
		t.Errorf("second PUT = %d %s", r.Status, r.Body)
	}
	r = e.Do("POST", "/files/upload/complete", map[string]any{"assetId": id, "fileHash": strings.Repeat("0", 64)}, "X-API-Key", secret)
	if r.Status != 400 || r.Code() != "VALIDATION_FAILED" {
		t.Errorf("complete with a wrong hash = %d %s", r.Status, r.Body)
	}
	r = e.Do("POST", "/files/upload/complete", map[string]any{"assetId": id, "fileHash": hash, "width": 40, "height": 30}, "Authorization", "Bearer "+secret)
	if r.Status != 200 || string(r.Body) != `{"id":"`+id+`","status":"completed"}` {
		t.Fatalf("complete = %d %s", r.Status, r.Body)
	}

	got = e.Do("GET", "/files/assets/"+id, nil, "Authorization", "Bearer "+pub).JSON(t)
	wantURL := e.URL + "/cdn/" + slot["storageKey"].(string)
	for k, want := range map[string]any{"id": id, "filename": "My Photo (1).png", "mimeType": "image/png", "size": float64(len(img)),
		"status": "completed", "url": wantURL, "title": nil, "alt": nil, "width": float64(40), "height": float64(30)} {
		if got[k] != want {
			t.Errorf("asset[%s] = %v, want %v", k, got[k], want)
		}
	}
	if tags, ok := got["tags"].([]any); !ok || len(tags) != 0 {
		t.Errorf("tags = %v, want []", got["tags"])
	}
	if _, err := time.Parse("2006-01-02T15:04:05.000Z", got["createdAt"].(string)); err != nil {
		t.Errorf("createdAt = %v", got["createdAt"])
	}

	r = e.Do("GET", "/files/check-duplicate?hash="+strings.ToUpper(hash), nil, "X-API-Key", pub)
	if r.Status != 200 || string(r.Body) != `{"isDuplicate":true,"assetId":"`+id+`"}` {
		t.Errorf("check-duplicate after = %d %s", r.Status, r.Body)
	}

	// The asset host.
	cdn := e.Do("GET", wantURL, nil)
	if cdn.Status != 200 || !bytes.Equal(cdn.Body, img) {
		t.Fatalf("asset host = %d, %d bytes", cdn.Status, len(cdn.Body))
	}
	for k, want := range map[string]string{
		"Content-Type": "image/png", "Etag": `"` + hash + `"`, "Cache-Control": "public, max-age=31536000, immutable",
		"X-Content-Type-Options": "nosniff", "Accept-Ranges": "bytes",
	} {
		if cdn.Header.Get(k) != want {
			t.Errorf("asset host %s = %q, want %q", k, cdn.Header.Get(k), want)
		}
	}
	part := e.Do("GET", wantURL, nil, "Range", "bytes=10-19")
	if part.Status != 206 || !bytes.Equal(part.Body, img[10:20]) || part.Header.Get("Content-Range") != fmt.Sprintf("bytes 10-19/%d", len(img)) {
		t.Errorf("range = %d %q %q", part.Status, part.Header.Get("Content-Range"), part.Body)
	}
	if r := e.Do("GET", wantURL, nil, "Range", fmt.Sprintf("bytes=%d-", len(img))); r.Status != 416 {
		t.Errorf("unsatisfiable range = %d", r.Status)
	}
	if r := e.Do("HEAD", wantURL, nil); r.Status != 200 || len(r.Body) != 0 || r.Header.Get("Etag") == "" {
		t.Errorf("HEAD = %d, %d bytes, %v", r.Status, len(r.Body), r.Header)
	}
	if r := e.Do("GET", wantURL, nil, "Range", "bytes=0-3", "If-Range", `"other"`); r.Status != 200 || len(r.Body) != len(img) {
		t.Errorf("If-Range with another ETag = %d, %d bytes, want the whole object", r.Status, len(r.Body))
	}
	if r := e.Do("GET", wantURL, nil, "If-None-Match", `"`+hash+`"`); r.Status != 304 {
		t.Errorf("If-None-Match = %d", r.Status)
	}
	for _, bad := range []string{
		"/cdn/globex/originals/" + id + "/My-Photo-1-.png",
		"/cdn/acme/originals/" + id + "/other.png",
		"/cdn/acme/originals/ast_nope/x.png",
	} {
		if r := e.Do("GET", bad, nil); r.Status != 404 {
			t.Errorf("GET %s = %d, want 404", bad, r.Status)
		}
	}
}

func TestErrors(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	pending := e.presign(t, secret, "a.png", "image/png", 10)["assetId"].(string)
	done := e.upload(t, secret, "b.png", "image/png", pngBytes(t, 2, 2))
	e.Run(t, []edgetest.Scenario{
		{Name: "presign publishable", Method: "POST", Path: "/files/upload/presigned", Key: pub, Body: `{"filename":"a.png","mimeType":"image/png","size":1}`, Status: 403, Code: "SECRET_KEY_REQUIRED"},
		{Name: "complete publishable", Method: "POST", Path: "/files/upload/complete", Key: pub, Body: `{"assetId":"` + pending + `"}`, Status: 403, Code: "SECRET_KEY_REQUIRED"},
		{Name: "presign no key", Method: "POST", Path: "/files/upload/presigned", Body: `{}`, Status: 401, Code: "-"},
		{Name: "list bad key", Method: "GET", Path: "/files/assets", Key: "pk_live_nope_nope", Status: 401, Code: "-"},
		{Name: "key without files", Method: "GET", Path: "/files/assets", Key: "sk_live_demo_noscope", Status: 403, Code: "FORBIDDEN"},
		{Name: "presign not json", Method: "POST", Path: "/files/upload/presigned", Key: secret, Body: `nope`, Status: 400, Code: "VALIDATION_FAILED"},
		{Name: "presign missing fields", Method: "POST", Path: "/files/upload/presigned", Key: secret, Body: `{}`, Status: 400, Code: "VALIDATION_FAILED"},
		{Name: "presign size not integer", Method: "POST", Path: "/files/upload/presigned", Key: secret, Body: `{"filename":"a.png","mimeType":"image/png","size":1.5}`, Status: 400, Code: "VALIDATION_FAILED"},
		{Name: "presign pdf", Method: "POST", Path: "/files/upload/presigned", Key: secret, Body: `{"filename":"a.pdf","mimeType":"application/pdf","size":100}`, Status: 400, Code: "UNSUPPORTED_MEDIA_TYPE"},
		{Name: "presign image/jpg", Method: "POST", Path: "/files/upload/presigned", Key: secret, Body: `{"filename":"a.jpg","mimeType":"image/jpg","size":100}`, Status: 400, Code: "UNSUPPORTED_MEDIA_TYPE"},
		{Name: "presign too large", Method: "POST", Path: "/files/upload/presigned", Key: secret, Body: `{"filename":"a.png","mimeType":"image/png","size":5242881}`, Status: 400, Code: "FILE_TOO_LARGE"},
		{Name: "presign exactly 5 MB", Method: "POST", Path: "/files/upload/presigned", Key: secret, Body: `{"filename":"a.png","mimeType":"image/png","size":5242880,"folderId":"f1"}`, Status: 200},
		{Name: "get unknown", Method: "GET", Path: "/files/assets/ast_01jzzzzzzzzzzzzzzzzzzzzzzz", Key: pub, Status: 404, Code: "ASSET_NOT_FOUND"},
		{Name: "get other org", Method: "GET", Path: "/files/assets/" + done, Key: "pk_live_globex_web", Status: 404, Code: "ASSET_NOT_FOUND"},
		{Name: "get other project", Method: "GET", Path: "/files/assets/" + done, Key: "sk_live_acme_other", Status: 404, Code: "ASSET_NOT_FOUND"},
		{Name: "get org-only key sees project asset", Method: "GET", Path: "/files/assets/" + done, Key: "pk_live_acme_files_org", Status: 200},
		{Name: "complete unknown", Method: "POST", Path: "/files/upload/complete", Key: secret, Body: `{"assetId":"ast_nope"}`, Status: 404, Code: "ASSET_NOT_FOUND"},
		{Name: "complete other org", Method: "POST", Path: "/files/upload/complete", Key: "sk_live_globex_server", Body: `{"assetId":"` + pending + `"}`, Status: 404, Code: "ASSET_NOT_FOUND"},
		{Name: "complete no id", Method: "POST", Path: "/files/upload/complete", Key: secret, Body: `{}`, Status: 400, Code: "VALIDATION_FAILED"},
		{Name: "complete incomplete", Method: "POST", Path: "/files/upload/complete", Key: secret, Body: `{"assetId":"` + pending + `"}`, Status: 409, Code: "UPLOAD_INCOMPLETE"},
		{Name: "complete twice", Method: "POST", Path: "/files/upload/complete", Key: secret, Body: `{"assetId":"` + done + `"}`, Status: 200},
		{Name: "complete wrong width", Method: "POST", Path: "/files/upload/complete", Key: secret, Body: `{"assetId":"` + pending + `","width":"x"}`, Status: 400, Code: "VALIDATION_FAILED"},
		{Name: "duplicate bad hash", Method: "GET", Path: "/files/check-duplicate?hash=abc", Key: pub, Status: 400, Code: "VALIDATION_FAILED"},
		{Name: "duplicate other org", Method: "GET", Path: "/files/check-duplicate?hash=" + sum(pngBytes(t, 2, 2)), Key: "pk_live_globex_web", Status: 200},
		{Name: "list bad cursor", Method: "GET", Path: "/files/assets?cursor=forged", Key: pub, Status: 400, Code: "INVALID_CURSOR"},
		{Name: "list limit 0", Method: "GET", Path: "/files/assets?limit=0", Key: pub, Status: 400, Code: "VALIDATION_FAILED"},
		{Name: "list limit 101", Method: "GET", Path: "/files/assets?limit=101", Key: pub, Status: 400, Code: "VALIDATION_FAILED"},
		{Name: "unknown route", Method: "GET", Path: "/files/nope", Key: pub, Status: 404, Code: "NOT_FOUND"},
	})
	if r := e.Do("GET", "/files/check-duplicate?hash="+sum(pngBytes(t, 2, 2)), nil, "X-API-Key", "pk_live_globex_web"); string(r.Body) != `{"isDuplicate":false}` {
		t.Errorf("duplicate check of another org = %s", r.Body)
	}
}

func TestUploadChecks(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	img := pngBytes(t, 8, 8)
	slotFor := func(mime string, size int) string {
		return e.presign(t, secret, "x", mime, size)["uploadUrl"].(string)
	}
	cases := []struct {
		name   string
		url    func() string
		body   io.Reader
		ctype  string
		status int
		code   string
	}{
		{"tampered size", func() string { return strings.Replace(slotFor("image/png", len(img)), "size=", "size=1", 1) }, bytes.NewReader(img), "image/png", 403, "UPLOAD_URL_INVALID"},
		{"tampered sig", func() string { u := slotFor("image/png", len(img)); return u[:len(u)-2] + "AA" }, bytes.NewReader(img), "image/png", 403, "UPLOAD_URL_INVALID"},
		{"no sig", func() string { u, _, _ := strings.Cut(slotFor("image/png", len(img)), "?"); return u }, bytes.NewReader(img), "image/png", 403, "UPLOAD_URL_INVALID"},
		{"other asset id", func() string {
			a := slotFor("image/png", len(img))
			b := e.presign(t, secret, "y", "image/png", len(img))["assetId"].(string)
			i := strings.Index(a, "ast_")
			return a[:i] + b + a[i+30:]
		}, bytes.NewReader(img), "image/png", 403, "UPLOAD_URL_INVALID"},
		{"jpeg bytes in png slot", func() string { return slotFor("image/png", len(jpegBytes(t, 4, 4))) }, bytes.NewReader(jpegBytes(t, 4, 4)), "image/png", 400, "UPLOAD_MISMATCH"},
		{"content-type differs", func() string { return slotFor("image/png", len(img)) }, bytes.NewReader(img), "image/gif", 400, "UPLOAD_MISMATCH"},
		{"text in png slot", func() string { return slotFor("image/png", 11) }, strings.NewReader("hello world"), "image/png", 400, "UPLOAD_MISMATCH"},
		{"longer content-length", func() string { return slotFor("image/png", len(img)-1) }, bytes.NewReader(img), "image/png", 400, "UPLOAD_MISMATCH"},
		{"shorter content-length", func() string { return slotFor("image/png", len(img)+1) }, bytes.NewReader(img), "image/png", 400, "UPLOAD_MISMATCH"},
		{"longer chunked body cut off", func() string { return slotFor("image/png", len(img)) }, io.MultiReader(bytes.NewReader(img), strings.NewReader("more")), "image/png", 400, "UPLOAD_MISMATCH"},
		{"shorter chunked body", func() string { return slotFor("image/png", len(img)+5) }, io.MultiReader(bytes.NewReader(img)), "image/png", 400, "UPLOAD_MISMATCH"},
		{"truncated png", func() string { return slotFor("image/png", 20) }, bytes.NewReader(img[:20]), "image/png", 400, "UPLOAD_MISMATCH"},
		{"pixel bomb", func() string { return slotFor("image/png", len(pngHeader(100000, 100000))) }, bytes.NewReader(pngHeader(100000, 100000)), "image/png", 400, "FILE_TOO_LARGE"},
		{"svg script", func() string { return slotFor("image/svg+xml", len(evilSVG)) }, strings.NewReader(evilSVG), "image/svg+xml", 400, "UNSAFE_SVG"},
		{"chunked ok", func() string { return slotFor("image/png", len(img)) }, io.MultiReader(bytes.NewReader(img)), "image/png", 200, ""},
		{"no content-type ok", func() string { return slotFor("image/png", len(img)) }, bytes.NewReader(img), "", 200, ""},
		{"jpeg", func() string { return slotFor("image/jpeg", len(jpegBytes(t, 5, 3))) }, bytes.NewReader(jpegBytes(t, 5, 3)), "image/jpeg", 200, ""},
		{"gif", func() string { return slotFor("image/gif", len(gifBytes(t, 5, 3))) }, bytes.NewReader(gifBytes(t, 5, 3)), "image/gif", 200, ""},
		{"webp", func() string { return slotFor("image/webp", len(webpBytes(7, 9))) }, bytes.NewReader(webpBytes(7, 9)), "image/webp", 200, ""},
		{"svg", func() string { return slotFor("image/svg+xml", len(okSVG)) }, strings.NewReader(okSVG), "image/svg+xml; charset=utf-8", 200, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			headers := []string{}
			if tc.ctype != "" {
				headers = append(headers, "Content-Type", tc.ctype)
			}
			r := e.Do("PUT", tc.url(), tc.body, headers...)
			if r.Status != tc.status || r.Code() != tc.code {
				t.Errorf("PUT = %d %s, want %d %s", r.Status, r.Body, tc.status, tc.code)
			}
		})
	}
}

func TestUploadMetrics(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	img := pngBytes(t, 2, 2)
	e.upload(t, secret, "m.png", "image/png", img)
	slot := e.presign(t, secret, "m.png", "image/png", len(img))
	e.put(t, slot["uploadUrl"].(string), []byte(strings.Repeat("x", len(img))), "image/png")
	m := string(e.Do("GET", "/metrics", nil).Body)
	for _, want := range []string{
		`gatehouse_files_uploads_total{outcome="accepted"} 1`,
		`gatehouse_files_uploads_total{outcome="UPLOAD_MISMATCH"} 1`,
		fmt.Sprintf("gatehouse_files_uploaded_bytes_total %d", len(img)),
	} {
		if !strings.Contains(m, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}

const evilSVG = `<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><script>alert(1)</script></svg>`
const okSVG = `<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 120 60"><rect width="10" height="10" fill="url(#g)"/></svg>`

func TestSVGServedWithCSP(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	id := e.upload(t, secret, "logo.svg", "image/svg+xml", []byte(okSVG))
	a := e.Do("GET", "/files/assets/"+id, nil, "X-API-Key", pub).JSON(t)
	if a["width"] != float64(120) || a["height"] != float64(60) {
		t.Errorf("svg size = %v x %v, want 120 x 60", a["width"], a["height"])
	}
	r := e.Do("GET", a["url"].(string), nil)
	if r.Status != 200 || r.Header.Get("Content-Type") != "image/svg+xml" || !strings.Contains(r.Header.Get("Content-Security-Policy"), "default-src 'none'") {
		t.Errorf("svg served %d %v", r.Status, r.Header)
	}
}

func TestRetryAfterMismatch(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	img := pngBytes(t, 3, 3)
	slot := e.presign(t, secret, "x.png", "image/png", len(img))
	if r := e.put(t, slot["uploadUrl"].(string), jpegBytes(t, 1, 1)[:len(img)%600], "image/png"); r.Status != 400 {
		t.Fatalf("bad PUT = %d %s", r.Status, r.Body)
	}
	if r := e.put(t, slot["uploadUrl"].(string), img, "image/png"); r.Status != 200 {
		t.Errorf("PUT after a refused one = %d %s, want 200 (a refused body does not use the slot)", r.Status, r.Body)
	}
}

func TestExpiredURLAndSweeper(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	img := pngBytes(t, 3, 3)
	slot := e.presign(t, secret, "x.png", "image/png", len(img))
	uploaded := e.presign(t, secret, "y.png", "image/png", len(img))
	if r := e.put(t, uploaded["uploadUrl"].(string), img, "image/png"); r.Status != 200 {
		t.Fatal(r.Status)
	}
	e.clock.Add(901 * time.Second)
	if r := e.put(t, slot["uploadUrl"].(string), img, "image/png"); r.Status != 403 || r.Code() != "UPLOAD_URL_INVALID" {
		t.Errorf("expired PUT = %d %s", r.Status, r.Body)
	}
	n, err := e.svc.Sweep(t.Context(), e.clock.Now())
	if err != nil || n != 1 {
		t.Errorf("Sweep = %d, %v, want 1 (the never-uploaded slot)", n, err)
	}
	if r := e.Do("GET", "/files/assets/"+slot["assetId"].(string), nil, "X-API-Key", pub); r.Status != 404 {
		t.Errorf("swept asset = %d", r.Status)
	}
	if r := e.Do("GET", "/files/assets/"+uploaded["assetId"].(string), nil, "X-API-Key", pub); r.Status != 200 {
		t.Errorf("uploaded asset within the grace = %d", r.Status)
	}
	e.clock.Add(time.Hour)
	if n, err := e.svc.Sweep(t.Context(), e.clock.Now()); err != nil || n != 1 {
		t.Errorf("second Sweep = %d, %v, want 1 (uploaded, never completed)", n, err)
	}
	if r := e.Do("POST", "/files/upload/complete", map[string]any{"assetId": uploaded["assetId"]}, "X-API-Key", secret); r.Status != 404 {
		t.Errorf("complete of a swept asset = %d", r.Status)
	}
}

func TestListPagingAndCategory(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	ids := map[string]bool{}
	for i := 0; i < 60; i++ {
		ids[e.presign(t, secret, fmt.Sprintf("f%02d.png", i), "image/png", 100)["assetId"].(string)] = true
	}
	e.presign(t, "sk_live_acme_other", "other.png", "image/png", 100)
	var sizes []int
	cursor, prev := "", "~"
	seen := map[string]bool{}
	for {
		path := "/files/assets?limit=25"
		if cursor != "" {
			path += "&cursor=" + url.QueryEscape(cursor)
		}
		page := e.Do("GET", path, nil, "X-API-Key", pub).JSON(t)
		items := page["items"].([]any)
		sizes = append(sizes, len(items))
		for _, it := range items {
			id := it.(map[string]any)["id"].(string)
			if id >= prev || !ids[id] || seen[id] {
				t.Errorf("item %s out of order, foreign or repeated", id)
			}
			prev, seen[id] = id, true
		}
		next := page["pagination"].(map[string]any)["nextCursor"]
		if next == nil {
			break
		}
		cursor = next.(string)
	}
	if fmt.Sprint(sizes) != "[25 25 10]" {
		t.Errorf("page sizes = %v, want [25 25 10]", sizes)
	}
	for cat, want := range map[string]int{"image": 60, "pdf": 0, "application": 0, "imag": 0, "image/png": 0} {
		page := e.Do("GET", "/files/assets?limit=100&mimeCategory="+url.QueryEscape(cat), nil, "X-API-Key", pub).JSON(t)
		if n := len(page["items"].([]any)); n != want {
			t.Errorf("mimeCategory=%s: %d items, want %d", cat, n, want)
		}
	}
	if n := len(e.Do("GET", "/files/assets?limit=100", nil, "X-API-Key", "pk_live_acme_files_org").JSON(t)["items"].([]any)); n != 61 {
		t.Errorf("org-only key lists %d, want 61 (both projects)", n)
	}
	// A cursor of one category is refused by another.
	page := e.Do("GET", "/files/assets?limit=1&mimeCategory=image", nil, "X-API-Key", pub).JSON(t)
	cur := page["pagination"].(map[string]any)["nextCursor"].(string)
	if r := e.Do("GET", "/files/assets?cursor="+url.QueryEscape(cur), nil, "X-API-Key", pub); r.Code() != "INVALID_CURSOR" {
		t.Errorf("foreign cursor = %d %s", r.Status, r.Body)
	}
}

func TestAssetHostByHostName(t *testing.T) {
	t.Parallel()
	e := start(t, func(c *config.Config) { c.AssetHost = "http://assets.example.test" })
	img := gifBytes(t, 4, 4)
	id := e.upload(t, secret, "a.gif", "image/gif", img)
	u := e.Do("GET", "/files/assets/"+id, nil, "X-API-Key", pub).JSON(t)["url"].(string)
	if want := "http://assets.example.test/acme/originals/" + id + "/a.gif"; u != want {
		t.Fatalf("url = %s, want %s", u, want)
	}
	r := e.Do("GET", "/acme/originals/"+id+"/a.gif", nil, "Host", "assets.example.test")
	if r.Status != 200 || !bytes.Equal(r.Body, img) {
		t.Errorf("asset host by Host = %d", r.Status)
	}
}

func TestOversizedPutIs413(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	slot := e.presign(t, secret, "x.png", "image/png", 100)
	u, _ := url.Parse(slot["uploadUrl"].(string))
	conn, err := net.Dial("tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// Only the headers: the answer must come before any of the body is sent.
	fmt.Fprintf(conn, "PUT %s HTTP/1.1\r\nHost: x\r\nContent-Type: image/png\r\nContent-Length: %d\r\n\r\n", u.RequestURI(), edge.MaxBodyBytes+1)
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 413 {
		t.Errorf("PUT over the server limit = %d, want 413", resp.StatusCode)
	}
	// Over the slot's size but under the server limit: refused after the first 8 KB; the
	// rest is never read.
	conn2, err := net.Dial("tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	defer conn2.Close()
	fmt.Fprintf(conn2, "PUT %s HTTP/1.1\r\nHost: x\r\nContent-Type: image/png\r\nContent-Length: %d\r\n\r\n", u.RequestURI(), 6<<20)
	go io.Copy(conn2, io.LimitReader(zeros{}, 6<<20)) //nolint:errcheck // the server stops reading
	resp, err = http.ReadResponse(bufio.NewReader(conn2), nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 400 || !strings.Contains(string(body), "UPLOAD_MISMATCH") {
		t.Errorf("PUT over the slot size = %d %s, want 400 UPLOAD_MISMATCH", resp.StatusCode, body)
	}
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) { clear(p); return len(p), nil }

// TestRefusedBodyKeepsConnectionInSync: a request refused before its body was read (here 401,
// no key) must not leave the body on a keep-alive connection to be parsed as the next request:
// a small body is drained and the connection kept, a large one closes it.
func TestRefusedBodyKeepsConnectionInSync(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	u, _ := url.Parse(e.URL)
	for _, size := range []int{1000, 20_000, 200_000} {
		conn, err := net.Dial("tcp", u.Host)
		if err != nil {
			t.Fatal(err)
		}
		br := bufio.NewReader(conn)
		fmt.Fprintf(conn, "POST /files/upload/presigned HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", size)
		go conn.Write(bytes.Repeat([]byte("GET /x HTTP/1.1\r\n"), size/17+1)[:size]) //nolint:errcheck
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		if resp.StatusCode != 401 {
			t.Errorf("size %d: POST without a key = %d", size, resp.StatusCode)
		}
		fmt.Fprintf(conn, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
		resp, err = http.ReadResponse(br, nil)
		switch {
		case err != nil && size < 64<<10:
			t.Errorf("size %d: next request on the connection: %v (a small body is drained, the connection kept)", size, err)
		case err == nil && resp.StatusCode != 200:
			t.Errorf("size %d: next request on the connection = %d, want 200 (or a closed connection)", size, resp.StatusCode)
		}
		conn.Close()
	}
}
