// Package codec encodes the pixels of an image variant: JPEG and PNG with Go's standard
// library, WebP and AVIF with the reference libraries (libwebp, libavif with aom) compiled to
// WebAssembly and run on wazero by github.com/gen2brain/webp and github.com/gen2brain/avif, so
// the gateway stays one static binary without cgo. Build with the nodynamic tag (the Makefile
// does): without it those packages first look for a system libwebp/libavif at start-up.
//
// It is the one door of the variants to a Wasm runtime (edge/deps_test.go): products/files
// declares the small Encoder interface it needs and this package's Codecs implements it, so
// the engine can change without touching the variants.
package codec

import (
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/jpeg"
	"image/png"
	"io"

	"github.com/gen2brain/avif"
	"github.com/gen2brain/webp"
)

// Codecs encodes JPEG, PNG, WebP and AVIF. The zero value is ready; the WebAssembly modules are
// compiled on first use (once per process, about a second for AVIF).
type Codecs struct{}

// Warm compiles the WebP and AVIF encoders' WebAssembly now (otherwise their first use does):
// a variant worker process calls it when it starts, so its first builds do not wait for it.
func Warm() {
	webp.Init()
	avif.InitEncoder()
}

// Formats the package writes, by name, with their MIME types.
var mimes = map[string]string{
	"jpeg": "image/jpeg", "png": "image/png", "webp": "image/webp", "avif": "image/avif",
}

// MimeType names the MIME type of a format ("" for an unknown one).
func MimeType(format string) string { return mimes[format] }

// Encode writes m in format (jpeg, png, webp, avif) at quality 1-100 (ignored by PNG). JPEG has
// no alpha: m is composed over white. The output carries no metadata.
func (Codecs) Encode(w io.Writer, m *image.NRGBA, format string, quality int) error {
	quality = min(max(quality, 1), 100)
	switch format {
	case "jpeg":
		return jpeg.Encode(w, overWhite(m), &jpeg.Options{Quality: quality})
	case "png":
		enc := png.Encoder{CompressionLevel: png.DefaultCompression}
		return enc.Encode(w, m)
	case "webp":
		// Quality 100 means lossless to libwebp; 99 keeps it lossy like the other values.
		// Method 1 (of 0-6, libwebp's default 4) skips the rate-distortion search of methods 3
		// and up: on a 320 px photograph it encoded in 14 ms instead of 57 ms, 7% larger
		// (BenchmarkVariantStages, docs/performance.md "Variants").
		return webp.Encode(w, m, webp.Options{Quality: min(quality, 99), Method: 1})
	case "avif":
		return avif.Encode(w, m, avif.Options{Quality: min(quality, 99), QualityAlpha: min(quality, 99), Speed: 10, ChromaSubsampling: image.YCbCrSubsampleRatio420})
	}
	return fmt.Errorf("codec: unknown format %q", format)
}

// overWhite composes m over an opaque white background. An opaque m is returned as the
// *image.RGBA of the same bytes (straight and premultiplied alpha agree at 255), which
// image/jpeg encodes on its fast path, not pixel by pixel through At.
func overWhite(m *image.NRGBA) image.Image {
	if m.Opaque() {
		return &image.RGBA{Pix: m.Pix, Stride: m.Stride, Rect: m.Rect}
	}
	dst := image.NewRGBA(m.Bounds())
	draw.Draw(dst, dst.Bounds(), image.NewUniform(color.White), image.Point{}, draw.Src)
	draw.Draw(dst, dst.Bounds(), m, m.Bounds().Min, draw.Over)
	return dst
}
