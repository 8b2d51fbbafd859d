// Package codec encodes the pixels of an image variant: JPEG and PNG with Go's standard
// library, WebP and AVIF with the reference libraries (libwebp, libavif with aom) compiled to
// WebAssembly and run on wazero, so the gateway stays one static binary without cgo. The
// WebAssembly is the very modules github.com/gen2brain/webp and github.com/gen2brain/avif
// embed, run on this package's own runtimes (wasm.go): WebP instances are kept between
// encodes, AVIF's memory is mapped outside the Go heap.
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
	"math"
)

// Codecs encodes JPEG, PNG, WebP and AVIF. The zero value is ready, and makes a new instance
// of the WebP module for each encode; New's keeps instances for the next encodes
// (webpwasm.go). The WebAssembly modules are compiled on first use (once per process, about
// a second for AVIF).
type Codecs struct {
	webp *webpInstances
}

// New answers Codecs that keep up to keep idle instances of the WebP module between encodes
// (one for each encode that runs at once: a variant worker's lanes).
func New(keep int) Codecs {
	return Codecs{webp: &webpInstances{max: keep}}
}

// Warm compiles the WebP and AVIF encoders' WebAssembly now (otherwise their first use does):
// a variant worker process calls it when it starts, so its first builds do not wait for it.
func Warm() {
	// An error shows at the first encode.
	_, _ = webpModule()
	_, _ = avifModule()
}

// Formats the package writes, by name, with their MIME types.
var mimes = map[string]string{
	"jpeg": "image/jpeg", "png": "image/png", "webp": "image/webp", "avif": "image/avif",
}

// MimeType names the MIME type of a format ("" for an unknown one).
func MimeType(format string) string { return mimes[format] }

// Encode writes m in format (jpeg, png, webp, avif) at quality 1-100 (ignored by PNG): m is an
// *image.NRGBA (straight alpha), or an opaque *image.YCbCr of full-range (JFIF) samples or
// *image.Gray, which JPEG and PNG encode as they are and WebP takes as libwebp's own YUV
// 4:2:0 input. JPEG has no alpha: m is
// composed over white. The output carries no metadata.
func (c Codecs) Encode(w io.Writer, m image.Image, format string, quality int) error {
	quality = min(max(quality, 1), 100)
	switch format {
	case "jpeg":
		return jpeg.Encode(w, overWhite(m), &jpeg.Options{Quality: quality})
	case "png":
		enc := png.Encoder{CompressionLevel: png.DefaultCompression}
		return enc.Encode(w, straight(m))
	case "webp":
		// Quality 100 means lossless to libwebp; 99 keeps it lossy like the other values.
		// Method 0 (of 0-6, libwebp's default 4) skips the rate-distortion search of methods 3
		// and up and the finer mode choices of 1 and 2: on a 320 px photograph's YUV it
		// encoded in 6.5 ms against 9.5 ms at method 1 (57 ms at 4 from RGBA), 12% larger
		// (docs/performance.md "Variants"; WebP stays at a fifth of PocketBase's bytes).
		quality, method := min(quality, 99), 0
		switch t := m.(type) {
		case *image.YCbCr:
			if t.SubsampleRatio == image.YCbCrSubsampleRatio420 {
				return c.webp.encodeWebP(w, webpYUV(t), t.Rect.Dx(), t.Rect.Dy(), webpYUV420A, quality, method)
			}
		case *image.Gray:
			g := grayYCbCr(t)
			return c.webp.encodeWebP(w, webpYUV(g), g.Rect.Dx(), g.Rect.Dy(), webpYUV420A, quality, method)
		}
		b := m.Bounds()
		return c.webp.encodeWebP(w, straightRGBA(m), b.Dx(), b.Dy(), webpRGBA, quality, method)
	case "avif":
		return encodeAVIF(w, m, min(quality, 99), min(quality, 99), 10)
	}
	return fmt.Errorf("codec: unknown format %q", format)
}

// overWhite composes m over an opaque white background. An opaque NRGBA is returned as the
// *image.RGBA of the same bytes (straight and premultiplied alpha agree at 255) and a YCbCr
// as it is, both of which image/jpeg encodes on its fast paths, not pixel by pixel through At.
func overWhite(m image.Image) image.Image {
	switch t := m.(type) {
	case *image.YCbCr, *image.Gray:
		return t
	case *image.NRGBA:
		if t.Opaque() {
			return &image.RGBA{Pix: t.Pix, Stride: t.Stride, Rect: t.Rect}
		}
	}
	dst := image.NewRGBA(m.Bounds())
	draw.Draw(dst, dst.Bounds(), image.NewUniform(color.White), image.Point{}, draw.Src)
	draw.Draw(dst, dst.Bounds(), m, m.Bounds().Min, draw.Over)
	return dst
}

// straight answers m as an *image.NRGBA (image/draw converts a YCbCr on its fast path).
func straight(m image.Image) image.Image {
	if _, ok := m.(*image.YCbCr); !ok {
		return m
	}
	dst := image.NewNRGBA(m.Bounds())
	draw.Draw(dst, dst.Bounds(), m, m.Bounds().Min, draw.Src)
	return dst
}

// Full-range (JFIF) YCbCr to the studio range libwebp's YUV input is (BT.601: luma 16-235,
// chroma 16-240 around 128), the same conversion WebPPictureImportRGBA makes of RGB.
var lumaStudio, chromaStudio = func() (l, c [256]uint8) {
	for i := range 256 {
		l[i] = uint8((i*219+255/2)/255 + 16)
		c[i] = uint8(128 + int(math.Round(float64(i-128)*224/255)))
	}
	return
}()

// grayYCbCr is g as YCbCr 4:2:0 with neutral chroma (its luma plane shared).
func grayYCbCr(g *image.Gray) *image.YCbCr {
	b := g.Rect
	w, h := b.Dx(), b.Dy()
	cw, ch := (w+1)/2, (h+1)/2
	c := make([]byte, cw*ch)
	for i := range c {
		c[i] = 128
	}
	return &image.YCbCr{Y: g.Pix[g.PixOffset(b.Min.X, b.Min.Y):], Cb: c, Cr: c, YStride: g.Stride, CStride: cw,
		SubsampleRatio: image.YCbCrSubsampleRatio420, Rect: image.Rect(0, 0, w, h)}
}

// webpYUV lays y out as libwebp's YUV 4:2:0 input with alpha (webpYUV420A): one buffer of the
// luma plane, the two chroma planes and an opaque alpha plane (libwebp writes no alpha when it
// is all 255), without row padding, in libwebp's studio range.
func webpYUV(y *image.YCbCr) []byte {
	b := y.Rect
	w, h := b.Dx(), b.Dy()
	cw, ch := (w+1)/2, (h+1)/2
	buf := make([]byte, 2*w*h+2*cw*ch)
	luma, cb, cr, alpha := buf[:w*h], buf[w*h:w*h+cw*ch], buf[w*h+cw*ch:w*h+2*cw*ch], buf[w*h+2*cw*ch:]
	for r := range h {
		src := y.Y[y.YOffset(b.Min.X, b.Min.Y+r):][:w]
		dst := luma[r*w:][:w]
		for i, v := range src {
			dst[i] = lumaStudio[v]
		}
	}
	for r := range ch {
		o := y.COffset(b.Min.X, b.Min.Y+2*r)
		for i := range cw {
			cb[r*cw+i] = chromaStudio[y.Cb[o+i]]
			cr[r*cw+i] = chromaStudio[y.Cr[o+i]]
		}
	}
	for i := range alpha {
		alpha[i] = 255
	}
	return buf
}

// straightRGBA answers m's pixels as straight-alpha RGBA rows without padding (libwebp's RGBA
// input): an *image.NRGBA's own bytes when they are laid out so, else a converted copy.
func straightRGBA(m image.Image) []byte {
	b := m.Bounds()
	if n, ok := m.(*image.NRGBA); ok && n.Stride == 4*b.Dx() {
		return n.Pix[n.PixOffset(b.Min.X, b.Min.Y):][:4*b.Dx()*b.Dy()]
	}
	dst := image.NewNRGBA(image.Rectangle{Max: b.Size()})
	draw.Draw(dst, dst.Bounds(), m, b.Min, draw.Src)
	return dst.Pix
}
