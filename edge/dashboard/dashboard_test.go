package dashboard

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gofiber/fiber/v2"
)

func newApp(t *testing.T, pub, assets string) *fiber.App {
	t.Helper()
	h, err := New(Options{PublicURL: pub, AssetURL: assets})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	app := fiber.New()
	h.Mount(app.Group(pathOf(pub) + "/" + h.Segment()))
	return app
}

func get(t *testing.T, app *fiber.App, path string, hdr map[string]string) (int, map[string]string, string) {
	t.Helper()
	req := httptest.NewRequest("GET", path, nil)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	res, err := app.Test(req)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(bytes.NewReader(b))
		if err != nil {
			t.Fatalf("GET %s: gzip: %v", path, err)
		}
		b, _ = io.ReadAll(zr)
	}
	h := map[string]string{}
	for k := range res.Header {
		h[k] = res.Header.Get(k)
	}
	return res.StatusCode, h, string(b)
}

func TestServesTheAppAndFallsBackToIndex(t *testing.T) {
	app := newApp(t, "https://gw.example.com/base", "https://cdn.example.com")
	cases := []struct {
		name, path, wantType, wantBody string
	}{
		{"root", "/base/dashboard/", "text/html", `<meta name="gatehouse-api" content="/base/admin/v1">`},
		{"app route", "/base/dashboard/keys", "text/html", `src="/base/dashboard/app.js"`},
		{"deep unknown route", "/base/dashboard/email/templates/welcome", "text/html", `<div id="root">`},
		{"script", "/base/dashboard/app.js", "javascript", ""},
		{"stylesheet", "/base/dashboard/app.css", "text/css", ""},
		{"favicon link", "/base/dashboard/", "text/html", `<link rel="icon" type="image/svg+xml" href="/base/dashboard/favicon.svg">`},
		{"favicon", "/base/dashboard/favicon.svg", "image/svg+xml", "<svg"},
	}
	for _, tc := range cases {
		code, h, body := get(t, app, tc.path, map[string]string{"Accept-Encoding": "gzip"})
		if code != 200 || !strings.Contains(h["Content-Type"], tc.wantType) || !strings.Contains(body, tc.wantBody) {
			t.Errorf("%s: GET %s = %d %q, body contains %q: %v", tc.name, tc.path, code, h["Content-Type"], tc.wantBody, strings.Contains(body, tc.wantBody))
		}
		if h["Content-Encoding"] != "gzip" {
			t.Errorf("%s: GET %s with Accept-Encoding gzip: Content-Encoding %q", tc.name, tc.path, h["Content-Encoding"])
		}
		if strings.Contains(tc.wantType, "html") && !strings.Contains(h["Content-Security-Policy"], "img-src 'self' data: blob: https://cdn.example.com") {
			t.Errorf("%s: CSP %q does not admit the asset host's images", tc.name, h["Content-Security-Policy"])
		}
	}
}

func TestRedirectsToTheSlashForm(t *testing.T) {
	app := newApp(t, "http://127.0.0.1:8787", "")
	code, h, _ := get(t, app, "/dashboard", nil)
	if code != 301 || h["Location"] != "/dashboard/" {
		t.Errorf("GET /dashboard = %d Location %q, want 301 /dashboard/", code, h["Location"])
	}
}

func TestConditionalAndPlainRequests(t *testing.T) {
	app := newApp(t, "http://127.0.0.1:8787", "")
	code, h, body := get(t, app, "/dashboard/app.js", nil)
	if code != 200 || h["Content-Encoding"] != "" || len(body) == 0 {
		t.Fatalf("GET app.js without gzip = %d encoding %q len %d", code, h["Content-Encoding"], len(body))
	}
	code, _, _ = get(t, app, "/dashboard/app.js", map[string]string{"If-None-Match": h["Etag"]})
	if code != 304 {
		t.Errorf("GET app.js If-None-Match its ETag = %d, want 304", code)
	}
	_, hz, _ := get(t, app, "/dashboard/app.js", map[string]string{"Accept-Encoding": "gzip"})
	if hz["Etag"] == h["Etag"] {
		t.Errorf("gzip and identity answers share the ETag %s", h["Etag"])
	}
}
