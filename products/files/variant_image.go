package files

import (
	"bytes"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"io"
	"slices"

	xdraw "golang.org/x/image/draw"
	"golang.org/x/image/webp"
)

// Encoder writes a variant's pixels in one output format (jpeg, png, webp, avif) at a quality
// of 1-100: m is an *image.NRGBA, or the opaque 4:2:0 *image.YCbCr or *image.Gray of a
// JPEG's variant (renderYCbCr, renderGray). products/files/codec implements it; the interface keeps the engine
// replaceable.
type Encoder interface {
	Encode(w io.Writer, m image.Image, format string, quality int) error
}

// layout is where a variant's pixels come from and go, in display orientation: the crop of the
// source, the size it is scaled to, and where that lands on the output canvas.
type layout struct {
	crop           image.Rectangle // in the displayed source
	scaleW, scaleH int             // the scaled crop
	canvas         image.Point     // the output's size
	at             image.Point     // the scaled crop's top left on the canvas
}

// plan lays spec out for a displayed source of sw x sh pixels. A variant is never enlarged:
// inside keeps the source's size when it fits; contain pads a smaller source to the box;
// cover crops the source to the box's aspect ratio at most at the source's scale.
func plan(sw, sh int, s Spec) layout {
	fw, fh := float64(sw), float64(sh)
	full := image.Rect(0, 0, sw, sh)
	fitIn := func(scale float64) (int, int) {
		scale = min(scale, 1)
		return max(1, int(fw*scale+0.5)), max(1, int(fh*scale+0.5))
	}
	switch {
	case s.Height == 0:
		w, h := fitIn(float64(s.Width) / fw)
		return layout{crop: full, scaleW: w, scaleH: h, canvas: image.Pt(w, h)}
	case s.Width == 0:
		w, h := fitIn(float64(s.Height) / fh)
		return layout{crop: full, scaleW: w, scaleH: h, canvas: image.Pt(w, h)}
	}
	bw, bh := float64(s.Width), float64(s.Height)
	switch s.Fit {
	case "cover":
		scale := max(bw/fw, bh/fh)
		if scale >= 1 { // the source is not larger than the box on one side: crop at scale 1
			w, h := min(sw, s.Width), min(sh, s.Height)
			c := image.Rect((sw-w)/2, (sh-h)/2, (sw-w)/2+w, (sh-h)/2+h)
			return layout{crop: c, scaleW: w, scaleH: h, canvas: image.Pt(w, h)}
		}
		cw, ch := min(sw, max(1, int(bw/scale+0.5))), min(sh, max(1, int(bh/scale+0.5)))
		c := image.Rect((sw-cw)/2, (sh-ch)/2, (sw-cw)/2+cw, (sh-ch)/2+ch)
		return layout{crop: c, scaleW: s.Width, scaleH: s.Height, canvas: image.Pt(s.Width, s.Height)}
	case "contain":
		w, h := fitIn(min(bw/fw, bh/fh))
		w, h = min(w, s.Width), min(h, s.Height)
		return layout{crop: full, scaleW: w, scaleH: h, canvas: image.Pt(s.Width, s.Height), at: image.Pt((s.Width-w)/2, (s.Height-h)/2)}
	default: // inside
		w, h := fitIn(min(bw/fw, bh/fh))
		w, h = min(w, s.Width), min(h, s.Height)
		return layout{crop: full, scaleW: w, scaleH: h, canvas: image.Pt(w, h)}
	}
}

// buildCost estimates the bytes a build holds at once: the original's bytes, the decoded source
// at halves/2 bytes a pixel (sourceHalves), the crop converted to 4 bytes a pixel when it is
// not shrunk by blocks first (render), the resampler's rows pass (the output's width by at
// most 4 times its height, 4 bytes a pixel), and the output at 4 bytes a pixel three times
// (scaled, converted for the encoder, the encoder's own copy).
func buildCost(fileSize int64, sw, sh int, s Spec, halves int) int64 {
	l := plan(sw, sh, s)
	cost := fileSize + int64(sw)*int64(sh)*int64(halves)/2 + int64(l.scaleW)*int64(l.scaleH)*4*4 +
		int64(l.canvas.X)*int64(l.canvas.Y)*4*3
	if shrinkFactor(l.crop.Size(), l.scaleW, l.scaleH) < 2 {
		cost += int64(l.crop.Dx()) * int64(l.crop.Dy()) * 4
	}
	return cost
}

// sourceHalves is twice the bytes a pixel the decoder's image of an original holds, read from
// the start of its bytes (head) with its type's DecodeConfig: a JPEG's YCbCr at most 3 bytes
// (4:4:4; 1.5 at the usual 4:2:0, which the header's colour model does not tell) and its
// gray 1, a lossy WebP's 1.5 (always 4:2:0) or 2.5 with alpha, a paletted PNG's 1 and a
// 16-bit one's 8 (a PNG's gray counts 4: with a transparent colour it decodes to RGBA);
// CMYK, RGBA, a GIF (its frame may be drawn on an RGBA canvas) and a header that does not
// read (cut short, malformed: the decode will say) 4.
func sourceHalves(head []byte, mime string) int {
	var cfg image.Config
	var err error
	r := bytes.NewReader(head)
	switch mime {
	case "image/jpeg":
		cfg, err = jpeg.DecodeConfig(r)
	case "image/png":
		cfg, err = png.DecodeConfig(r)
	case "image/webp":
		cfg, err = webp.DecodeConfig(r)
	default:
		return 8
	}
	if err != nil {
		return 8
	}
	m := cfg.ColorModel
	_, paletted := m.(color.Palette)
	switch {
	case mime == "image/jpeg" && m == color.YCbCrModel:
		return 6
	case mime == "image/jpeg" && m == color.GrayModel:
		return 2
	case mime == "image/webp" && m == color.YCbCrModel:
		return 3
	case mime == "image/webp" && m == color.NYCbCrAModel:
		return 5
	case mime == "image/png" && paletted:
		return 2
	case mime == "image/png" && (m == color.Gray16Model || m == color.RGBA64Model || m == color.NRGBA64Model):
		return 16
	}
	return 8
}

// errUnreadable wraps every failure to decode an original.
var errUnreadable = errors.New("files: the original cannot be decoded")

// decodeSource decodes the original's bytes of type mime (PNG, JPEG, GIF: its first frame,
// WebP) after checking the header's dimensions against maxPixels (ErrVariantTooLarge).
func decodeSource(data []byte, mime string, maxPixels int) (image.Image, error) {
	var cfg image.Config
	var err error
	var decode func(io.Reader) (image.Image, error)
	switch mime {
	case "image/jpeg":
		cfg, err = jpeg.DecodeConfig(bytes.NewReader(data))
		decode = jpeg.Decode
	case "image/png":
		cfg, err = png.DecodeConfig(bytes.NewReader(data))
		decode = png.Decode
	case "image/gif":
		cfg, err = gif.DecodeConfig(bytes.NewReader(data))
		decode = gif.Decode
	case "image/webp":
		cfg, err = webp.DecodeConfig(bytes.NewReader(data))
		decode = webp.Decode
	default:
		return nil, fmt.Errorf("%w: no raster decoder for %s", errUnreadable, mime)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errUnreadable, err)
	}
	if cfg.Width <= 0 || cfg.Height <= 0 {
		return nil, fmt.Errorf("%w: no pixels", errUnreadable)
	}
	if int64(cfg.Width)*int64(cfg.Height) > int64(maxPixels) {
		return nil, ErrVariantTooLarge
	}
	img, err := decode(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errUnreadable, err)
	}
	canvas := image.Rect(0, 0, cfg.Width, cfg.Height)
	if img.Bounds() != canvas {
		// A GIF's first frame may cover only part of its logical screen.
		if !img.Bounds().In(canvas) {
			return nil, fmt.Errorf("%w: the frame lies outside the image", errUnreadable)
		}
		full := image.NewNRGBA(canvas)
		xdraw.Draw(full, img.Bounds(), img, img.Bounds().Min, xdraw.Src)
		img = full
	}
	return img, nil
}

// render makes the variant's pixels of a decoded source with EXIF orientation o: the crop is
// scaled with a Catmull-Rom filter (resample) in stored orientation, then turned upright (cheap on the
// small image), then placed on the canvas (transparent padding). A YCbCr or gray source (a
// JPEG) without padding is rendered on its planes (renderYCbCr, renderGray), the rest as
// straight RGBA.
func render(src image.Image, o int, s Spec) image.Image {
	switch t := src.(type) {
	case *image.YCbCr:
		if out, ok := renderYCbCr(t, o, s); ok {
			return out
		}
	case *image.Gray:
		if out, ok := renderGray(t, o, s); ok {
			return out
		}
	}
	return renderRGBA(src, o, s)
}

// renderRGBA is render through premultiplied RGBA, answering straight alpha.
func renderRGBA(src image.Image, o int, s Spec) *image.NRGBA {
	b := src.Bounds()
	sw, sh := b.Dx(), b.Dy()
	if o >= 5 { // displayed sideways
		sw, sh = sh, sw
	}
	l := plan(sw, sh, s)
	stored := storedRect(o, b.Dx(), b.Dy(), l.crop).Add(b.Min)
	tw, th := l.scaleW, l.scaleH
	if o >= 5 {
		tw, th = th, tw
	}
	var scaled *image.RGBA
	if k := shrinkFactor(stored.Size(), tw, th); k >= 2 {
		// The blocks span the crop's size over k, a partial last block counting for its part:
		// the filter maps the output onto that span, not onto the whole blocks.
		from := boxShrink(src, stored, k)
		fb := from.Bounds()
		sx, sy := float64(stored.Dx())/float64(k*tw), float64(stored.Dy())/float64(k*th)
		scaled = resampleWith(from, fb,
			catmullRomAxis(axis{lo: 0, hi: fb.Dx(), c0: sx / 2, step: sx, n: tw}),
			catmullRomAxis(axis{lo: 0, hi: fb.Dy(), c0: sy / 2, step: sy, n: th}))
	} else {
		// The filter reads each source pixel several times: the crop is converted once to
		// premultiplied RGBA (image/draw's fast paths for YCbCr, NRGBA, gray).
		from := image.NewRGBA(image.Rectangle{Max: stored.Size()})
		xdraw.Draw(from, from.Bounds(), src, stored.Min, xdraw.Src)
		scaled = from
		if from.Bounds().Size() != image.Pt(tw, th) {
			scaled = resample(from, from.Bounds(), tw, th)
		}
	}
	up := orient(scaled, o)
	out := image.NewNRGBA(image.Rectangle{Max: l.canvas})
	unpremultiply(out, l.at, up)
	return out
}

// shrinkFactor is the block size boxShrink averages a crop of size c by before the filter
// scales it to w x h: the whole factor that leaves at least twice the output's size (below 2,
// no shrink).
func shrinkFactor(c image.Point, w, h int) int { return min(c.X/(2*w), c.Y/(2*h)) }

// boxShrink averages the k x k blocks of r in src (premultiplied; the last row and column of
// blocks may be smaller), converting k source rows at a time. A large reduction (a 4096 px
// original to a 320 px variant) then costs one pass over the source, and the Catmull-Rom filter
// runs on at most twice the output's size instead of with a kernel k times wider over every
// source pixel (libvips too shrinks by whole factors before it resamples). The result keeps
// the filter's quality: it is at least twice the output's size.
func boxShrink(src image.Image, r image.Rectangle, k int) *image.RGBA {
	w, h := (r.Dx()+k-1)/k, (r.Dy()+k-1)/k
	dst := image.NewRGBA(image.Rect(0, 0, w, h))
	strip := image.NewRGBA(image.Rect(0, 0, r.Dx(), k))
	sums := make([]uint64, 4*w)
	for oy := range h {
		y0 := r.Min.Y + oy*k
		rows := min(k, r.Max.Y-y0)
		xdraw.Draw(strip, image.Rect(0, 0, r.Dx(), rows), src, image.Pt(r.Min.X, y0), xdraw.Src)
		clear(sums)
		for y := range rows {
			row := strip.Pix[y*strip.Stride : y*strip.Stride+4*r.Dx()]
			for ox := range w {
				s := sums[4*ox : 4*ox+4]
				for p := range slices.Chunk(row[4*ox*k:4*min(r.Dx(), (ox+1)*k)], 4) {
					s[0] += uint64(p[0])
					s[1] += uint64(p[1])
					s[2] += uint64(p[2])
					s[3] += uint64(p[3])
				}
			}
		}
		out := dst.Pix[oy*dst.Stride:]
		for ox := range w {
			n := uint64(rows * min(k, r.Dx()-ox*k))
			for c := range 4 {
				out[4*ox+c] = uint8((sums[4*ox+c] + n/2) / n)
			}
		}
	}
	return dst
}

// unpremultiply copies the premultiplied pixels of src into dst at offset at, as straight
// (non-premultiplied) alpha, the form the encoders take.
func unpremultiply(dst *image.NRGBA, at image.Point, src *image.RGBA) {
	b := src.Bounds()
	for y := 0; y < b.Dy(); y++ {
		s := src.Pix[y*src.Stride : y*src.Stride+4*b.Dx()]
		d := dst.Pix[(y+at.Y)*dst.Stride+4*at.X:]
		for i := 0; i < len(s); i += 4 {
			switch a := s[i+3]; a {
			case 0:
				d[i], d[i+1], d[i+2], d[i+3] = 0, 0, 0, 0
			case 255:
				copy(d[i:i+4], s[i:i+4])
			default:
				a32 := uint32(a)
				d[i] = uint8(min(255, (uint32(s[i])*255+a32/2)/a32))
				d[i+1] = uint8(min(255, (uint32(s[i+1])*255+a32/2)/a32))
				d[i+2] = uint8(min(255, (uint32(s[i+2])*255+a32/2)/a32))
				d[i+3] = a
			}
		}
	}
}

// storedRect maps a rectangle of the displayed image to the stored pixels (w x h stored) under
// EXIF orientation o: the displayed image turned by o's inverse (6 and 8 undo each other, the
// other orientations undo themselves) is the stored one.
func storedRect(o, w, h int, r image.Rectangle) image.Rectangle {
	inv, dw, dh := o, w, h
	switch o {
	case 6:
		inv = 8
	case 8:
		inv = 6
	}
	if o >= 5 && o <= 8 {
		dw, dh = h, w
	}
	ax, ay := oriented(inv, r.Min.X, r.Min.Y, dw, dh)
	cx, cy := oriented(inv, r.Max.X-1, r.Max.Y-1, dw, dh)
	return image.Rect(min(ax, cx), min(ay, cy), max(ax, cx)+1, max(ay, cy)+1)
}

// oriented is where the stored pixel (x, y) of a w x h image goes once turned upright for
// EXIF orientation o (2 to 8; orientations 5 to 8 swap the axes).
func oriented(o, x, y, w, h int) (dx, dy int) {
	switch o {
	case 2:
		return w - 1 - x, y
	case 3:
		return w - 1 - x, h - 1 - y
	case 4:
		return x, h - 1 - y
	case 5:
		return y, x
	case 6:
		return h - 1 - y, x
	case 7:
		return h - 1 - y, w - 1 - x
	case 8:
		return y, w - 1 - x
	}
	return x, y
}

// orient turns stored pixels upright for EXIF orientation o.
func orient(m *image.RGBA, o int) *image.RGBA {
	if o < 2 || o > 8 {
		return m
	}
	w, h := m.Bounds().Dx(), m.Bounds().Dy()
	dw, dh := w, h
	if o >= 5 {
		dw, dh = h, w
	}
	out := image.NewRGBA(image.Rect(0, 0, dw, dh))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			dx, dy := oriented(o, x, y, w, h)
			si, di := m.PixOffset(x, y), out.PixOffset(dx, dy)
			copy(out.Pix[di:di+4], m.Pix[si:si+4])
		}
	}
	return out
}

// makeVariant decodes an original and encodes its variant in format (jpeg, png, webp, avif,
// or "" for JPEG, PNG when the result has transparency). It answers the bytes and the format
// written.
func makeVariant(data []byte, mime string, s Spec, format string, maxPixels int, enc Encoder) ([]byte, string, image.Point, error) {
	src, err := decodeSource(data, mime, maxPixels)
	if err != nil {
		return nil, "", image.Point{}, err
	}
	return encodeVariant(src, data, mime, s, format, enc)
}

// encodeVariant is makeVariant of an original already decoded (src, from data).
func encodeVariant(src image.Image, data []byte, mime string, s Spec, format string, enc Encoder) ([]byte, string, image.Point, error) {
	out := render(src, Orientation(data, mime), s)
	if format == "" {
		format = "jpeg"
		if o, ok := out.(interface{ Opaque() bool }); ok && !o.Opaque() {
			format = "png"
		}
	}
	var buf bytes.Buffer
	if err := enc.Encode(&buf, out, format, s.Quality); err != nil {
		return nil, "", image.Point{}, fmt.Errorf("files: encoding a %s variant: %w", format, err)
	}
	return buf.Bytes(), format, out.Bounds().Size(), nil
}

// buildShared is makeVariant decoding through ss, shared with the builds of the same original
// (content key) running at the same time.
func buildShared(ss *sources, key string, data []byte, mime string, s Spec, format string, maxPixels int, enc Encoder) ([]byte, string, image.Point, error) {
	src, done, err := ss.decode(key, data, mime, maxPixels)
	if err != nil {
		done()
		return nil, "", image.Point{}, err
	}
	defer done()
	return encodeVariant(src, data, mime, s, format, enc)
}
