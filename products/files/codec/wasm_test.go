package codec

import (
	"bytes"
	"image"
	"testing"

	"github.com/gen2brain/avif"
	"github.com/gen2brain/webp"
)

// testYCbCr is a w x h 4:2:0 image of gradients and a pattern (something for the encoder to
// work on).
func testYCbCr(w, h int) *image.YCbCr {
	m := image.NewYCbCr(image.Rect(0, 0, w, h), image.YCbCrSubsampleRatio420)
	for y := range h {
		for x := range w {
			m.Y[y*m.YStride+x] = uint8(x*255/w ^ (y*7)&31)
		}
	}
	for i := range m.Cb {
		m.Cb[i], m.Cr[i] = uint8(i*3), uint8(255-i*5)
	}
	return m
}

// The kept instances write exactly what gen2brain/webp writes with the same module and options
// (one instance per call there), call after call on the same instance, for YUV and RGBA input
// and sizes up and down; an instance grown past keptMemory is closed, not kept.
func TestWebPKeptInstances(t *testing.T) {
	t.Parallel()
	c := New(1)
	for _, tc := range []struct {
		name string
		m    image.Image
	}{
		{"yuv 320", testYCbCr(320, 320)},
		{"yuv odd", testYCbCr(101, 33)},
		{"rgba with alpha", func() image.Image {
			n := image.NewNRGBA(image.Rect(0, 0, 64, 48))
			for i := range n.Pix {
				n.Pix[i] = uint8(i * 13)
			}
			return n
		}()},
		{"yuv 320 again", testYCbCr(320, 320)},
		{"yuv 1", testYCbCr(1, 1)},
	} {
		var want bytes.Buffer
		in := tc.m
		if y, ok := in.(*image.YCbCr); ok {
			// gen2brain/webp takes YUV as an NYCbCrA of the same planes (studio range).
			buf := webpYUV(y)
			w, h := y.Rect.Dx(), y.Rect.Dy()
			cw, ch := (w+1)/2, (h+1)/2
			in = &image.NYCbCrA{YCbCr: image.YCbCr{Y: buf[:w*h], Cb: buf[w*h : w*h+cw*ch], Cr: buf[w*h+cw*ch : w*h+2*cw*ch],
				YStride: w, CStride: cw, SubsampleRatio: image.YCbCrSubsampleRatio420, Rect: y.Rect}, A: buf[w*h+2*cw*ch:], AStride: w}
		}
		if err := webp.Encode(&want, in, webp.Options{Quality: 80, Method: 0}); err != nil {
			t.Fatal(err)
		}
		for i := range 3 {
			var got bytes.Buffer
			if err := c.Encode(&got, tc.m, "webp", 80); err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
			if !bytes.Equal(got.Bytes(), want.Bytes()) {
				t.Fatalf("%s, call %d: %d bytes differ from gen2brain/webp's %d", tc.name, i, got.Len(), want.Len())
			}
		}
		if n := len(c.webp.idle); n != 1 {
			t.Fatalf("%s: %d idle instances, want 1", tc.name, n)
		}
	}
	var big bytes.Buffer
	if err := c.Encode(&big, testYCbCr(2048, 2048), "webp", 80); err != nil {
		t.Fatal(err)
	}
	if n := len(c.webp.idle); n != 0 {
		t.Fatalf("after a 2048 px encode %d idle instances, want 0 (its memory is over keptMemory)", n)
	}
	var zero bytes.Buffer // the zero Codecs: an instance per call
	if err := (Codecs{}).Encode(&zero, testYCbCr(320, 320), "webp", 80); err != nil || zero.Len() == 0 {
		t.Fatalf("zero Codecs: %d bytes, %v", zero.Len(), err)
	}
}

// BenchmarkWebPEncode is a WebP encode of a w x w YUV image with instances kept (kept) and
// with an instance per call (fresh, as gen2brain/webp does): the per-call part is the
// difference.
func BenchmarkWebPEncode(b *testing.B) {
	for _, w := range []int{8, 100, 320} {
		m := testYCbCr(w, w)
		for _, k := range []struct {
			name string
			c    Codecs
		}{{"kept", New(1)}, {"fresh", Codecs{}}} {
			b.Run(k.name+"/"+itoa(w), func(b *testing.B) {
				var buf bytes.Buffer
				for range b.N {
					buf.Reset()
					if err := k.c.Encode(&buf, m, "webp", 80); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// encodeAVIF writes exactly what gen2brain/avif writes with the same module and options, for
// YCbCr, opaque and translucent NRGBA input and odd sizes, call after call.
func TestAVIFMappedMemory(t *testing.T) {
	t.Parallel()
	translucent := image.NewNRGBA(image.Rect(0, 0, 37, 21))
	for i := range translucent.Pix {
		translucent.Pix[i] = uint8(i * 29)
	}
	for _, tc := range []struct {
		name string
		m    image.Image
	}{
		{"yuv 100", testYCbCr(100, 100)},
		{"yuv odd", testYCbCr(51, 17)},
		{"translucent", translucent},
	} {
		var want bytes.Buffer
		if err := avif.Encode(&want, tc.m, avif.Options{Quality: 70, QualityAlpha: 70, Speed: 10, ChromaSubsampling: image.YCbCrSubsampleRatio420}); err != nil {
			t.Fatal(err)
		}
		for i := range 2 {
			var got bytes.Buffer
			if err := (Codecs{}).Encode(&got, tc.m, "avif", 70); err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
			if !bytes.Equal(got.Bytes(), want.Bytes()) {
				t.Fatalf("%s, call %d: %d bytes differ from gen2brain/avif's %d", tc.name, i, got.Len(), want.Len())
			}
		}
	}
}

// BenchmarkAVIFEncode is an AVIF encode of a w x w YUV image here (mapped: the memory outside
// the Go heap) and by gen2brain/avif (its instance's memory a Go slice grown by copying).
func BenchmarkAVIFEncode(b *testing.B) {
	for _, w := range []int{8, 100, 320} {
		m := testYCbCr(w, w)
		b.Run("mapped/"+itoa(w), func(b *testing.B) {
			var buf bytes.Buffer
			for range b.N {
				buf.Reset()
				if err := (Codecs{}).Encode(&buf, m, "avif", 80); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("gen2brain/"+itoa(w), func(b *testing.B) {
			var buf bytes.Buffer
			for range b.N {
				buf.Reset()
				if err := avif.Encode(&buf, m, avif.Options{Quality: 80, QualityAlpha: 80, Speed: 10, ChromaSubsampling: image.YCbCrSubsampleRatio420}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func itoa(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}
