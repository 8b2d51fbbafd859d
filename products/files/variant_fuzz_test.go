package files

import (
	"bytes"
	"errors"
	"image"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// discard is an Encoder that writes nothing: the fuzz targets test decoding and resizing.
type discard struct{}

func (discard) Encode(io.Writer, image.Image, string, int) error { return nil }

// seedPhotos adds the test photographs and cut copies of them to f's corpus.
func seedPhotos(f *testing.F, add func(data []byte)) {
	paths, _ := filepath.Glob("testdata/photos/*.*")
	if len(paths) == 0 {
		f.Fatal("no test photographs")
	}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		add(b)
		add(b[:len(b)/3])
	}
}

// FuzzVariant feeds any bytes, as the type they sniff as, through the decode-and-resize path
// with any box: it must not panic, must refuse more than the pixel limit, and a variant it
// makes never exceeds its box.
func FuzzVariant(f *testing.F) {
	seedPhotos(f, func(b []byte) { f.Add(b, uint16(64), uint16(64), uint8(0)) })
	f.Add(pngHeaderOnly(5000, 5000), uint16(10), uint16(0), uint8(1))
	f.Fuzz(func(t *testing.T, data []byte, w, h uint16, fit uint8) {
		mime := SniffType(data)
		if mime == "" || mime == "image/svg+xml" {
			return
		}
		s := Spec{Width: int(w % 300), Height: int(h % 300), Fit: fits[int(fit)%len(fits)], Format: "png", Quality: 80}
		if s.Width == 0 && s.Height == 0 {
			s.Width = 1
		}
		if h := sourceHalves(data, mime); h < 2 || h > 16 {
			t.Fatalf("sourceHalves = %d", h)
		}
		_, _, size, err := makeVariant(data, mime, s, "png", 1<<20, discard{})
		if err != nil {
			if !errors.Is(err, errUnreadable) && !errors.Is(err, ErrVariantTooLarge) {
				t.Fatalf("makeVariant: unexpected error %v", err)
			}
			return
		}
		if size.X <= 0 || size.Y <= 0 || s.Width > 0 && size.X > s.Width || s.Height > 0 && size.Y > s.Height {
			t.Fatalf("variant of %+v is %v", s, size)
		}
	})
}

// FuzzOrientation reads the EXIF orientation of any bytes of any type: 1-8, never a panic.
func FuzzOrientation(f *testing.F) {
	seedPhotos(f, func(b []byte) {
		for _, m := range []string{"image/jpeg", "image/png", "image/webp"} {
			f.Add(b, m)
		}
	})
	f.Add([]byte("RIFF\x20\x00\x00\x00WEBPEXIF\x0e\x00\x00\x00II*\x00\x08\x00\x00\x00\x01\x00\x12\x01"), "image/webp")
	f.Add([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\x1ceXIfMM\x00*\x00\x00\x00\x08\x00\x01\x01\x12\x00\x03\x00\x00\x00\x01\x00\x08\x00\x00"), "image/png")
	f.Fuzz(func(t *testing.T, data []byte, mime string) {
		if o := Orientation(data, mime); o < 1 || o > 8 {
			t.Fatalf("Orientation = %d", o)
		}
	})
}

// FuzzVariantSegment checks any variant segment: only what Segment wrote verifies.
func FuzzVariantSegment(f *testing.F) {
	v, err := NewVariantSigner([]byte("0123456789abcdef0123456789abcdef"))
	if err != nil {
		f.Fatal(err)
	}
	good := v.Segment("demo", "ast_1", Spec{Width: 320, Height: 200, Fit: "cover", Format: "webp", Quality: 75})
	for _, s := range []string{good, "w320_h200_cover_webp_q75", "h1_inside_auto_q1_s00", "w0_cover_png_q5_s", "__s", "thumb"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, seg string) {
		s, ok := v.Verify("demo", "ast_1", seg)
		if ok && v.Segment("demo", "ast_1", s) != seg {
			t.Fatalf("Verify accepted %q, which Segment spells %q", seg, v.Segment("demo", "ast_1", s))
		}
		if c, ok := parseCanonical(seg); ok && c.Canonical() != seg {
			t.Fatalf("parseCanonical(%q) spells %q", seg, c.Canonical())
		}
	})
}

// pngHeaderOnly is a PNG signature and IHDR of w x h RGB pixels with no pixel data.
func pngHeaderOnly(w, h uint32) []byte {
	var b bytes.Buffer
	b.WriteString("\x89PNG\r\n\x1a\n\x00\x00\x00\x0dIHDR")
	b.Write([]byte{byte(w >> 24), byte(w >> 16), byte(w >> 8), byte(w), byte(h >> 24), byte(h >> 16), byte(h >> 8), byte(h), 8, 2, 0, 0, 0})
	b.Write([]byte{0, 0, 0, 0})
	return b.Bytes()
}
