package files_test

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"os"
	"strings"
	"testing"

	"github.com/gen2brain/avif"
	xdraw "golang.org/x/image/draw"
	"golang.org/x/image/webp"
)

// photo reads a test photograph of testdata/photos (made from Debian's gnome-backgrounds by
// testdata/photos/make).
func photo(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/photos/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

var photoTypes = map[string]string{
	"photo.jpg": "image/jpeg", "rotated.jpg": "image/jpeg", "gray.jpg": "image/jpeg", "cmyk.jpg": "image/jpeg",
	"alpha.png": "image/png", "palette.png": "image/png", "anim.gif": "image/gif",
}

// decodeAny decodes a variant's bytes by its Content-Type, reading its pixels back.
func decodeAny(t testing.TB, ctype string, b []byte) image.Image {
	t.Helper()
	var m image.Image
	var err error
	switch ctype {
	case "image/jpeg":
		m, err = jpeg.Decode(bytes.NewReader(b))
	case "image/png":
		m, err = png.Decode(bytes.NewReader(b))
	case "image/webp":
		m, err = webp.Decode(bytes.NewReader(b))
	case "image/avif":
		m, err = avif.Decode(bytes.NewReader(b))
	case "image/gif":
		m, err = gif.Decode(bytes.NewReader(b))
	default:
		t.Fatalf("variant of type %q", ctype)
	}
	if err != nil {
		t.Fatalf("decoding a %s variant: %v", ctype, err)
	}
	return m
}

// variantURL is the asset's URL with originals replaced by seg.
func variantURL(t testing.TB, e *env, id, seg string) string {
	t.Helper()
	a := e.Do("GET", "/files/assets/"+id, nil, "X-API-Key", pub).JSON(t)
	u, ok := a["url"].(string)
	if !ok || !strings.Contains(u, "/originals/") {
		t.Fatalf("asset %s has no original URL: %v", id, a)
	}
	return strings.Replace(u, "/originals/", "/"+seg+"/", 1)
}

// signed asks the API for an ad-hoc variant URL.
func signed(t testing.TB, e *env, key, id string, opts map[string]any) string {
	t.Helper()
	r := e.Do("POST", "/files/assets/"+id+"/variant-url", opts, "X-API-Key", key)
	if r.Status != 200 {
		t.Fatalf("variant-url %v: %d %s", opts, r.Status, r.Body)
	}
	return r.JSON(t)["url"].(string)
}

// meanDiff is the mean absolute difference of two images' colour channels (0-255), over the
// first one's bounds; the second must be at least as large.
func meanDiff(a, b image.Image) float64 {
	var sum float64
	n := 0
	ab, bb := a.Bounds(), b.Bounds()
	for y := 0; y < ab.Dy(); y++ {
		for x := 0; x < ab.Dx(); x++ {
			c1 := color.NRGBAModel.Convert(a.At(ab.Min.X+x, ab.Min.Y+y)).(color.NRGBA)
			c2 := color.NRGBAModel.Convert(b.At(bb.Min.X+x, bb.Min.Y+y)).(color.NRGBA)
			for _, d := range []int{int(c1.R) - int(c2.R), int(c1.G) - int(c2.G), int(c1.B) - int(c2.B)} {
				sum += float64(max(d, -d))
			}
			n += 3
		}
	}
	return sum / float64(n)
}

// scaled resizes m to w x h (the reference a variant is compared with).
func scaled(m image.Image, w, h int) image.Image {
	dst := image.NewNRGBA(image.Rect(0, 0, w, h))
	xdraw.CatmullRom.Scale(dst, dst.Bounds(), m, m.Bounds(), xdraw.Src, nil)
	return dst
}

// Every fit and format, named and ad-hoc, of real photographs: the type, the headers and the
// size read back from the bytes.
func TestVariantsOfPhotos(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	ids := map[string]string{}
	for name, mime := range photoTypes {
		ids[name] = e.upload(t, secret, name, mime, photo(t, name))
	}
	const avifAccept = "image/avif,image/webp,image/apng,image/*,*/*;q=0.8"
	for _, tc := range []struct {
		photo, seg string
		opts       map[string]any // an ad-hoc variant when set
		accept     string
		ctype      string
		w, h       int
		vary       bool
	}{
		{photo: "photo.jpg", seg: "thumb", accept: avifAccept, ctype: "image/avif", w: 64, h: 64, vary: true},
		{photo: "photo.jpg", seg: "thumb", accept: "image/webp,*/*", ctype: "image/webp", w: 64, h: 64, vary: true},
		{photo: "photo.jpg", seg: "thumb", accept: "image/avif;q=0, image/webp", ctype: "image/webp", w: 64, h: 64, vary: true},
		{photo: "photo.jpg", seg: "thumb", ctype: "image/jpeg", w: 64, h: 64, vary: true},
		{photo: "photo.jpg", seg: "wide", ctype: "image/jpeg", w: 120, h: 75, vary: true},
		{photo: "photo.jpg", seg: "box", ctype: "image/png", w: 100, h: 50},
		{photo: "photo.jpg", opts: map[string]any{"width": 200, "height": 200}, ctype: "image/jpeg", w: 200, h: 125, vary: true},
		{photo: "photo.jpg", opts: map[string]any{"width": 50, "height": 80, "fit": "cover", "format": "webp", "quality": 60}, ctype: "image/webp", w: 50, h: 80},
		{photo: "photo.jpg", opts: map[string]any{"width": 90, "height": 90, "fit": "contain", "format": "avif"}, ctype: "image/avif", w: 90, h: 90},
		{photo: "photo.jpg", opts: map[string]any{"height": 100, "format": "png"}, ctype: "image/png", w: 160, h: 100},
		{photo: "photo.jpg", opts: map[string]any{"width": 100, "height": 100, "fit": "inside", "format": "jpeg", "quality": 90}, ctype: "image/jpeg", w: 100, h: 63},
		// Never enlarged: inside keeps the source size, cover crops at the source's scale.
		{photo: "photo.jpg", opts: map[string]any{"width": 2000, "format": "jpeg"}, ctype: "image/jpeg", w: 640, h: 400},
		{photo: "photo.jpg", opts: map[string]any{"width": 1000, "height": 100, "fit": "cover", "format": "jpeg"}, ctype: "image/jpeg", w: 640, h: 100},
		{photo: "rotated.jpg", seg: "wide", ctype: "image/jpeg", w: 120, h: 75, vary: true},
		{photo: "rotated.jpg", seg: "thumb", accept: "image/webp", ctype: "image/webp", w: 64, h: 64, vary: true},
		{photo: "gray.jpg", seg: "wide", ctype: "image/jpeg", w: 120, h: 80, vary: true},
		{photo: "cmyk.jpg", seg: "wide", ctype: "image/jpeg", w: 120, h: 75, vary: true},
		{photo: "alpha.png", seg: "wide", ctype: "image/png", w: 120, h: 90, vary: true},
		{photo: "alpha.png", seg: "thumb", accept: "image/webp", ctype: "image/webp", w: 64, h: 64, vary: true},
		{photo: "alpha.png", seg: "wide", accept: avifAccept, ctype: "image/avif", w: 120, h: 90, vary: true},
		{photo: "alpha.png", opts: map[string]any{"width": 60, "format": "jpeg"}, ctype: "image/jpeg", w: 60, h: 45},
		{photo: "palette.png", seg: "wide", ctype: "image/jpeg", w: 120, h: 120, vary: true},
		{photo: "anim.gif", seg: "wide", ctype: "image/jpeg", w: 120, h: 90, vary: true},
		{photo: "anim.gif", seg: "box", ctype: "image/png", w: 100, h: 50},
	} {
		name := tc.photo + " " + tc.seg + fmt.Sprint(tc.opts) + " " + tc.accept
		t.Run(name, func(t *testing.T) {
			u := ""
			if tc.opts != nil {
				u = signed(t, e, secret, ids[tc.photo], tc.opts)
			} else {
				u = variantURL(t, e, ids[tc.photo], tc.seg)
			}
			var hdr []string
			if tc.accept != "" {
				hdr = []string{"Accept", tc.accept}
			}
			r := e.Do("GET", u, nil, hdr...)
			if r.Status != 200 {
				t.Fatalf("GET %s = %d %s", u, r.Status, r.Body)
			}
			if ct := r.Header.Get("Content-Type"); ct != tc.ctype {
				t.Errorf("Content-Type = %q, want %q", ct, tc.ctype)
			}
			if got := r.Header.Get("Vary") == "Accept"; got != tc.vary {
				t.Errorf("Vary = %q, want Accept: %v", r.Header.Get("Vary"), tc.vary)
			}
			if cc := r.Header.Get("Cache-Control"); cc != "public, max-age=31536000, immutable" {
				t.Errorf("Cache-Control = %q", cc)
			}
			if r.Header.Get("Content-Length") != fmt.Sprint(len(r.Body)) || !strings.HasPrefix(r.Header.Get("ETag"), `"`) {
				t.Errorf("Content-Length %q for %d bytes, ETag %q", r.Header.Get("Content-Length"), len(r.Body), r.Header.Get("ETag"))
			}
			m := decodeAny(t, tc.ctype, r.Body)
			if b := m.Bounds(); b.Dx() != tc.w || b.Dy() != tc.h {
				t.Errorf("variant is %dx%d, want %dx%d", b.Dx(), b.Dy(), tc.w, tc.h)
			}
			// Made once: the second request is the same object, and answers ranges and 304.
			r2 := e.Do("GET", u, nil, append(hdr, "Range", "bytes=0-9")...)
			if r2.Status != 206 || !bytes.Equal(r2.Body, r.Body[:10]) || r2.Header.Get("ETag") != r.Header.Get("ETag") {
				t.Errorf("range of the variant = %d, ETag %q vs %q", r2.Status, r2.Header.Get("ETag"), r.Header.Get("ETag"))
			}
			if r3 := e.Do("GET", u, nil, append(hdr, "If-None-Match", r.Header.Get("ETag"))...); r3.Status != 304 {
				t.Errorf("If-None-Match = %d, want 304", r3.Status)
			}
		})
	}
}

// The pixels are right: EXIF orientation applied (rotated.jpg is photo.jpg stored sideways),
// CMYK and grayscale read, an animated GIF's first frame, contain's transparent padding.
func TestVariantPixels(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	get := func(name, seg string, opts map[string]any) image.Image {
		t.Helper()
		id := e.upload(t, secret, name, photoTypes[name], photo(t, name))
		u := variantURL(t, e, id, seg)
		if opts != nil {
			u = signed(t, e, secret, id, opts)
		}
		r := e.Do("GET", u, nil)
		if r.Status != 200 {
			t.Fatalf("GET %s = %d %s", u, r.Status, r.Body)
		}
		return decodeAny(t, r.Header.Get("Content-Type"), r.Body)
	}
	ref := func(name string) image.Image {
		m, _, err := image.Decode(bytes.NewReader(photo(t, name)))
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	upright := get("photo.jpg", "wide", nil)
	if d := meanDiff(upright, scaled(ref("photo.jpg"), 120, 75)); d > 4 {
		t.Errorf("photo.jpg's variant differs from the photo scaled by %.1f per channel", d)
	}
	if d := meanDiff(get("rotated.jpg", "wide", nil), upright); d > 4 {
		t.Errorf("rotated.jpg's variant differs from photo.jpg's by %.1f per channel: orientation not applied", d)
	}
	// ImageMagick turned photo.jpg into CMYK without a profile, as Go reads it back.
	if d := meanDiff(get("cmyk.jpg", "wide", nil), upright); d > 8 {
		t.Errorf("cmyk.jpg's variant differs from photo.jpg's by %.1f per channel", d)
	}
	g := get("gray.jpg", "wide", nil)
	if d := meanDiff(g, scaled(ref("gray.jpg"), 120, 80)); d > 8 {
		t.Errorf("gray.jpg's variant differs by %.1f per channel", d)
	}
	first := get("anim.gif", "wide", nil)
	if d := meanDiff(first, scaled(ref("anim.gif"), 120, 90)); d > 8 {
		t.Errorf("anim.gif's variant differs from its first frame by %.1f per channel", d)
	}
	// box: 100x50 contain of a 640x400 photo: 80x50 in the middle, 10 transparent columns each side.
	box := get("photo.jpg", "box", nil)
	for _, p := range []image.Point{{0, 0}, {9, 25}, {90, 49}, {99, 10}} {
		if _, _, _, a := box.At(p.X, p.Y).RGBA(); a != 0 {
			t.Errorf("padding pixel %v has alpha %d", p, a)
		}
	}
	if _, _, _, a := box.At(50, 25).RGBA(); a != 0xffff {
		t.Errorf("middle pixel of the contained photo has alpha %d", a)
	}
	// alpha.png (transparent at its edges) keeps its transparency in PNG, and is composed
	// over white in JPEG.
	al := get("alpha.png", "wide", nil)
	if _, _, _, a := al.At(0, 0).RGBA(); a > 0x1000 {
		t.Errorf("alpha.png's corner has alpha %d, want nearly transparent", a>>8)
	}
	if r, g, b, _ := get("alpha.png", "", map[string]any{"width": 60, "format": "jpeg"}).At(0, 0).RGBA(); r>>8 < 240 || g>>8 < 240 || b>>8 < 240 {
		t.Errorf("alpha.png's transparent corner in JPEG = %d,%d,%d, want white", r>>8, g>>8, b>>8)
	}
}

// A variant carries no metadata: no EXIF, no GPS, no comment, in any format.
func TestVariantStripsMetadata(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	orig := photo(t, "rotated.jpg")
	for _, s := range [][]byte{[]byte("Exif"), []byte("gatehouse-secret-comment")} {
		if !bytes.Contains(orig, s) {
			t.Fatalf("rotated.jpg lacks %q", s)
		}
	}
	id := e.upload(t, secret, "rotated.jpg", "image/jpeg", orig)
	for _, format := range []string{"jpeg", "png", "webp", "avif"} {
		r := e.Do("GET", signed(t, e, secret, id, map[string]any{"width": 80, "format": format}), nil)
		if r.Status != 200 {
			t.Fatalf("%s variant = %d %s", format, r.Status, r.Body)
		}
		for _, s := range []string{"Exif", "EXIF", "eXIf", "gatehouse-secret-comment", "GPS"} {
			if bytes.Contains(r.Body, []byte(s)) {
				t.Errorf("the %s variant contains %q", format, s)
			}
		}
	}
}

func TestVariantSignatures(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	id := e.upload(t, secret, "photo.jpg", "image/jpeg", photo(t, "photo.jpg"))
	other := e.upload(t, secret, "photo.jpg", "image/jpeg", photo(t, "photo.jpg"))
	good := signed(t, e, secret, id, map[string]any{"width": 40, "height": 40, "fit": "cover", "format": "png", "quality": 50})
	if !strings.Contains(good, "/acme/w40_h40_cover_png_q50_s") {
		t.Fatalf("signed URL = %s", good)
	}
	if r := e.Do("GET", good, nil); r.Status != 200 {
		t.Fatalf("signed URL = %d %s", r.Status, r.Body)
	}
	i := strings.LastIndex(good, "_s") + 2
	flip := "0"
	if good[i] == '0' {
		flip = "1"
	}
	seg := good[strings.Index(good, "/acme/")+6 : strings.Index(good, "/"+id)]
	// The good segment was verified and remembered above: each of these is checked anew.
	for _, tc := range []struct{ name, url string }{
		{"wrong signature", good[:i] + flip + good[i+1:]},
		{"missing signature", strings.Replace(good, seg, "w40_h40_cover_png_q50", 1)},
		{"other options", strings.Replace(good, "w40_h40", "w400_h400", 1)},
		{"re-spelled options", strings.Replace(good, "w40_h40", "w040_h40", 1)},
		{"another asset's id", strings.Replace(good, id, other, 1)},
		{"short signature", strings.Replace(good, seg, seg[:len(seg)-1], 1)},
	} {
		if r := e.Do("GET", tc.url, nil); r.Status != 403 || r.Code() != "VARIANT_NOT_SIGNED" {
			t.Errorf("%s: %s = %d %s, want 403 VARIANT_NOT_SIGNED", tc.name, tc.url, r.Status, r.Body)
		}
	}
	if r := e.Do("GET", variantURL(t, e, id, "nope"), nil); r.Status != 404 || r.Code() != "NOT_FOUND" {
		t.Errorf("unknown variant = %d %s, want 404 NOT_FOUND", r.Status, r.Body)
	}
	if r := e.Do("GET", strings.Replace(variantURL(t, e, id, "thumb"), "photo.jpg", "other.jpg", 1), nil); r.Status != 404 {
		t.Errorf("variant under another file name = %d, want 404", r.Status)
	}
	// The signing route: secret key only, options validated.
	if r := e.Do("POST", "/files/assets/"+id+"/variant-url", map[string]any{"width": 10}, "X-API-Key", pub); r.Status != 403 || r.Code() != "SECRET_KEY_REQUIRED" {
		t.Errorf("variant-url with a publishable key = %d %s", r.Status, r.Body)
	}
	for _, body := range []map[string]any{
		{}, {"width": 0}, {"width": 5000}, {"width": 10, "fit": "fill"}, {"width": 10, "format": "gif"},
		{"width": 10, "quality": 0}, {"width": 10, "quality": 101}, {"width": "10"}, {"width": 10, "crop": true},
	} {
		if r := e.Do("POST", "/files/assets/"+id+"/variant-url", body, "X-API-Key", secret); r.Status != 400 || r.Code() != "VALIDATION_FAILED" {
			t.Errorf("variant-url %v = %d %s, want 400 VALIDATION_FAILED", body, r.Status, r.Body)
		}
	}
	if r := e.Do("POST", "/files/assets/"+id+"/variant-url", map[string]any{"width": 10}, "X-API-Key", "sk_live_globex_server"); r.Status != 404 {
		t.Errorf("variant-url of another org's asset = %d %s", r.Status, r.Body)
	}
}

// An SVG has no raster variants: its variant URLs answer the original.
func TestVariantOfSVG(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	svg := []byte(`<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><rect width="10" height="10"/></svg>`)
	id := e.upload(t, secret, "a.svg", "image/svg+xml", svg)
	r := e.Do("GET", variantURL(t, e, id, "thumb"), nil)
	if r.Status != 200 || !bytes.Equal(r.Body, svg) || r.Header.Get("Content-Type") != "image/svg+xml" || r.Header.Get("Content-Security-Policy") == "" {
		t.Errorf("SVG variant = %d %s %q", r.Status, r.Header.Get("Content-Type"), r.Body)
	}
	if r := e.Do("GET", variantURL(t, e, id, "nope"), nil); r.Status != 404 {
		t.Errorf("unknown variant of an SVG = %d", r.Status)
	}
}

// The tenants document's files section is checked with paths.
func TestVariantSectionChecked(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	for _, tc := range []struct{ variants, want string }{
		{`[{name: originals, width: 10}]`, "files.variants[0].name"},
		{`[{name: Thumb, width: 10}]`, "files.variants[0].name"},
		{`[{name: a_b, width: 10}]`, "files.variants[0].name"},
		{`[{name: abcdefghijabcdefghijabcdefghijabc, width: 10}]`, "files.variants[0].name"},
		{`[{name: a, width: 10}, {name: a, width: 20}]`, "files.variants[1]"},
		{`[{name: a}]`, "files.variants[0].width"},
		{`[{name: a, width: 0}]`, "files.variants[0].width"},
		{`[{name: a, width: 10, height: 99999}]`, "files.variants[0].height"},
		{`[{name: a, width: 10, fit: stretch}]`, "files.variants[0].fit"},
		{`[{name: a, width: 10, format: gif}]`, "files.variants[0].format"},
		{`[{name: a, width: 10, quality: 0}]`, "files.variants[0].quality"},
		{`[{name: a, width: 10, quality: 101}]`, "files.variants[0].quality"},
		{`[{name: a, width: 10, crop: true}]`, "files.variants[0].crop"},
	} {
		doc := "orgs: [{slug: acme, projects: [{id: demo, files: {variants: " + tc.variants + "}}]}]"
		d, err := e.Tenancy.Parse([]byte(doc))
		if err == nil {
			_, err = e.Tenancy.Apply(t.Context(), d)
		}
		if err == nil || !strings.Contains(err.Error(), "orgs[0].projects[0]."+tc.want) {
			t.Errorf("apply %s = %v, want a problem at %s", tc.variants, err, tc.want)
		}
	}
}

// A variant defined after the asset, or changed, is served at once (the cache follows applies).
func TestVariantFollowsTheDocument(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	id := e.upload(t, secret, "photo.jpg", "image/jpeg", photo(t, "photo.jpg"))
	if r := e.Do("GET", variantURL(t, e, id, "late"), nil); r.Status != 404 {
		t.Fatalf("undefined variant = %d", r.Status)
	}
	e.Apply(strings.Replace(tenants, "- {name: wide, width: 120}", "- {name: wide, width: 60}\n            - {name: late, height: 20, format: png}", 1))
	for seg, want := range map[string]image.Point{"late": {32, 20}, "wide": {60, 38}} {
		r := e.Do("GET", variantURL(t, e, id, seg), nil)
		if r.Status != 200 {
			t.Fatalf("%s after the apply = %d %s", seg, r.Status, r.Body)
		}
		if got := decodeAny(t, r.Header.Get("Content-Type"), r.Body).Bounds().Size(); got != want {
			t.Errorf("%s is %v, want %v", seg, got, want)
		}
	}
}
