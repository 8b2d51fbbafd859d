package files

import (
	"bytes"
	"image"
	"image/png"
	"os"
	"testing"

	"github.com/gatehouse-dev/gatehouse/products/files/codec"
)

// The build's estimate of a decoded original, from its header: the expected bytes a pixel for
// each kind of original, and never less than what the decoder's image really holds.
func TestSourceHalves(t *testing.T) {
	t.Parallel()
	read := func(name string) []byte {
		data, err := os.ReadFile("testdata/photos/" + name)
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	encode := func(name, format string) []byte { // a photograph re-encoded (WebP lossy, with alpha)
		m, _, err := image.Decode(bytes.NewReader(read(name)))
		if err != nil {
			t.Fatal(err)
		}
		n := image.NewNRGBA(m.Bounds())
		for y := range m.Bounds().Dy() {
			for x := range m.Bounds().Dx() {
				n.Set(x, y, m.At(m.Bounds().Min.X+x, m.Bounds().Min.Y+y))
			}
		}
		var buf bytes.Buffer
		if err := (codec.Codecs{}).Encode(&buf, n, format, 80); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	var png16 bytes.Buffer
	if err := png.Encode(&png16, image.NewRGBA64(image.Rect(0, 0, 64, 48))); err != nil {
		t.Fatal(err)
	}
	photo := read("photo.jpg")
	for _, tc := range []struct {
		name   string
		data   []byte
		mime   string
		halves int
	}{
		{"JPEG YCbCr", photo, "image/jpeg", 6},
		{"JPEG gray", read("gray.jpg"), "image/jpeg", 2},
		{"JPEG CMYK", read("cmyk.jpg"), "image/jpeg", 8},
		{"PNG with alpha", read("alpha.png"), "image/png", 8},
		{"PNG paletted", read("palette.png"), "image/png", 2},
		{"PNG 16-bit", png16.Bytes(), "image/png", 16},
		{"GIF", read("anim.gif"), "image/gif", 8},
		{"WebP lossy", encode("photo.jpg", "webp"), "image/webp", 3},
		{"WebP with alpha", encode("alpha.png", "webp"), "image/webp", 5},
		{"cut short", photo[:40], "image/jpeg", 8},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := sourceHalves(tc.data, tc.mime); got != tc.halves {
				t.Errorf("sourceHalves = %d, want %d", got, tc.halves)
			}
			m, err := decodeSource(tc.data, tc.mime, 1<<30)
			if err != nil {
				return // the estimate of an unreadable original does not matter
			}
			px := int64(m.Bounds().Dx()) * int64(m.Bounds().Dy())
			held := imageBytes(m)
			if p, ok := m.(*image.Paletted); ok { // its palette counts in the original's bytes
				held -= int64(4 * len(p.Palette))
			}
			if held*2 > px*int64(tc.halves) {
				t.Errorf("the decoded %T holds %d bytes, over the estimate's %d", m, held, px*int64(tc.halves)/2)
			}
		})
	}
}
