package files_test

import (
	"bytes"
	"image"
	"strings"
	"testing"
)

// The admin API gives each image its thumbnail for the dashboard's file list: the project's
// variant named thumb, else a signed 256 px ad-hoc crop; an SVG its original; a pending asset
// none. The URL answers the small image, and the asset's admin view then lists that variant.
func TestAdminThumbnail(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	svg := []byte(`<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><rect width="10" height="10"/></svg>`)
	for _, tc := range []struct {
		name, key, file, mime string
		body                  []byte
		seg                   string // a part of the thumbnail URL's variant segment ("" none)
		size                  image.Point
	}{
		{"named thumb", secret, "photo.jpg", "image/jpeg", photo(t, "photo.jpg"), "/thumb/", image.Pt(64, 64)},
		{"ad-hoc without a named thumb", "sk_live_acme_other", "photo.jpg", "image/jpeg", photo(t, "photo.jpg"), "/w256_h256_cover_auto_q70_s", image.Pt(256, 256)},
		{"smaller than the box", "sk_live_acme_other", "alpha.png", "image/png", photo(t, "alpha.png"), "/w256_h256_cover_auto_q70_s", image.Point{}},
		{"svg: the original", secret, "a.svg", "image/svg+xml", svg, "/originals/", image.Point{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id := e.upload(t, tc.key, tc.file, tc.mime, tc.body)
			u := thumbnailOf(t, e, id)
			if !strings.Contains(u, tc.seg) || !strings.Contains(u, "/"+id+"/") {
				t.Fatalf("thumbnailUrl = %q, want it to contain %q and the id", u, tc.seg)
			}
			r := e.Do("GET", u, nil, "Accept", "image/webp,*/*")
			if r.Status != 200 {
				t.Fatalf("GET thumbnail = %d %s", r.Status, r.Body)
			}
			if tc.mime == "image/svg+xml" {
				if !bytes.Equal(r.Body, svg) {
					t.Errorf("SVG thumbnail = %q", r.Body)
				}
				return
			}
			got := decodeAny(t, r.Header.Get("Content-Type"), r.Body).Bounds().Size()
			if r.Header.Get("Content-Type") != "image/webp" || got.X > 256 || got.Y > 256 || (tc.size != image.Point{} && got != tc.size) {
				t.Errorf("thumbnail = %s %v, want WebP %v", r.Header.Get("Content-Type"), got, tc.size)
			}
			v := e.Admin("GET", "/assets/"+id, nil).JSON(t)["variants"].([]any)
			if len(v) != 1 || v[0].(map[string]any)["mimeType"] != "image/webp" {
				t.Errorf("variants after the thumbnail = %v", v)
			}
		})
	}
	// A pending asset is not on the asset host: no thumbnail, in the list as in the view.
	slot := e.presign(t, secret, "later.png", "image/png", 10)
	pending := slot["assetId"].(string)
	if a := e.Admin("GET", "/assets/"+pending, nil).JSON(t); a["thumbnailUrl"] != nil {
		t.Errorf("pending asset's thumbnailUrl = %v", a["thumbnailUrl"])
	}
	items := e.Admin("GET", "/assets?org=acme", nil).JSON(t)["items"].([]any)
	for _, it := range items {
		a := it.(map[string]any)
		if _, ok := a["thumbnailUrl"]; ok == (a["id"] == pending) {
			t.Errorf("listed %v: thumbnailUrl %v", a["id"], a["thumbnailUrl"])
		}
	}
	if len(items) != 5 {
		t.Errorf("list: %d items, want 5", len(items))
	}
}

// thumbnailOf is the admin view's thumbnailUrl of the asset id.
func thumbnailOf(t *testing.T, e *env, id string) string {
	t.Helper()
	a := e.Admin("GET", "/assets/"+id, nil).JSON(t)
	u, _ := a["thumbnailUrl"].(string)
	if u == "" {
		t.Fatalf("asset %s has no thumbnailUrl: %v", id, a)
	}
	return u
}
