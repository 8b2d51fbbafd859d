package files

import (
	"image"
	"math"
)

// A JPEG decodes to *image.YCbCr: a full-size luma plane and two chroma planes, a quarter of
// its pixels each at 4:2:0. Its opaque variants are rendered on those planes (renderYCbCr)
// instead of on the crop converted to premultiplied RGBA: the filter reads 1.5 samples a pixel
// instead of 4, there is no colour conversion before it or unpremultiplying after it, and the
// result is the *image.YCbCr that image/jpeg encodes on its fast path and libwebp takes as
// its native YUV 4:2:0 input (codec.Codecs).

// plane is one channel of 8-bit samples: w x h, rows stride bytes apart.
type plane struct {
	pix    []byte
	stride int
	w, h   int
}

// axis maps the output samples of one axis to the source: output sample i's centre is the
// source coordinate c0 + i*step (source sample j's centre is j + 0.5), its filter reads only
// source samples in [lo, hi).
type axis struct {
	lo, hi   int
	c0, step float64
	n        int
}

// catmullRomAxis lays the Catmull-Rom filter out for a: as catmullRomKernel, widened by the
// reduction (step) when it is above 1, with the taps clamped to [lo, hi) and renormalised.
func catmullRomAxis(a axis) kernel {
	width := max(1, a.step)
	radius := 2 * width
	k := kernel{start: make([]int, a.n), w: make([][]int32, a.n)}
	fw := make([]float64, 0, int(2*radius)+3)
	for i := range a.n {
		c := a.c0 + float64(i)*a.step
		lo := min(max(a.lo, int(math.Floor(c-radius))), a.hi-1)
		hi := max(min(a.hi, int(math.Ceil(c+radius))), lo+1)
		fw = fw[:0]
		sum := 0.0
		for j := lo; j < hi; j++ {
			x := math.Abs((float64(j) + 0.5 - c) / width)
			var v float64
			switch {
			case x < 1:
				v = (1.5*x-2.5)*x*x + 1
			case x < 2:
				v = ((-0.5*x+2.5)*x-4)*x + 2
			}
			fw = append(fw, v)
			sum += v
		}
		w := make([]int32, len(fw))
		if sum == 0 { // the centre lies outside [lo, hi): the nearest sample
			w[min(max(0, int(c)-lo), len(w)-1)] = 1 << weightBits
			k.start[i], k.w[i] = lo, w
			continue
		}
		var total, big int32
		for j, v := range fw {
			w[j] = int32(math.Round(v / sum * (1 << weightBits)))
			total += w[j]
			if w[j] > w[big] {
				big = int32(j)
			}
		}
		w[big] += 1<<weightBits - total
		k.start[i], k.w[i] = lo, w
	}
	return k
}

// shrinkAxes averages whole k x k blocks of src's part [x.lo, x.hi) x [y.lo, y.hi) first
// when both reductions are 4 or more (k the whole factor leaving at least twice the output's
// samples, as boxShrink), and answers the plane and axes the filter then reads.
func shrinkAxes(src plane, x, y axis) (plane, axis, axis) {
	k := int(min(x.step, y.step) / 2)
	if k < 2 {
		return src, x, y
	}
	w, h := (x.hi-x.lo+k-1)/k, (y.hi-y.lo+k-1)/k
	dst := plane{pix: make([]byte, w*h), stride: w, w: w, h: h}
	sums := make([]uint32, w)
	for oy := range h {
		y0 := y.lo + oy*k
		rows := min(k, y.hi-y0)
		if k == 2 && rows == 2 { // halving, the most common: two rows, no per-block slices
			a := src.pix[y0*src.stride+x.lo : y0*src.stride+x.hi]
			b := src.pix[(y0+1)*src.stride+x.lo : (y0+1)*src.stride+x.hi][:len(a)]
			out := dst.pix[oy*w : oy*w+w]
			for len(a) >= 2 && len(b) >= 2 && len(out) > 0 {
				out[0] = uint8((uint32(a[0]) + uint32(a[1]) + uint32(b[0]) + uint32(b[1]) + 2) / 4)
				a, b, out = a[2:], b[2:], out[1:]
			}
			if len(a) == 1 && len(b) == 1 && len(out) == 1 { // an odd width: a last block of one column
				out[0] = uint8((uint32(a[0]) + uint32(b[0]) + 1) / 2)
			}
			continue
		}
		clear(sums)
		for yy := y0; yy < y0+rows; yy++ {
			row := src.pix[yy*src.stride+x.lo : yy*src.stride+x.hi]
			for ox := range w {
				var s uint32
				for _, v := range row[ox*k : min(len(row), (ox+1)*k)] {
					s += uint32(v)
				}
				sums[ox] += s
			}
		}
		out := dst.pix[oy*w : oy*w+w]
		for ox := range w {
			n := uint32(rows * min(k, x.hi-x.lo-ox*k))
			out[ox] = uint8((sums[ox] + n/2) / n)
		}
	}
	shrunk := func(a axis, n int) axis {
		return axis{lo: 0, hi: n, c0: (a.c0 - float64(a.lo)) / float64(k), step: a.step / float64(k), n: a.n}
	}
	return dst, shrunk(x, w), shrunk(y, h)
}

// resamplePlanes filters each of srcs (planes of one size, as a JPEG's two chroma planes) to
// x.n x y.n samples along the two axes (after shrinkAxes), rows first then columns, in the
// fixed point of resample; the kernels are laid out once for all of them.
func resamplePlanes(x, y axis, srcs ...plane) []plane {
	out := make([]plane, len(srcs))
	var kx, ky kernel
	for i, src := range srcs {
		src, sx, sy := shrinkAxes(src, x, y)
		if i == 0 {
			kx, ky = catmullRomAxis(sx), catmullRomAxis(sy)
		}
		out[i] = filterPlane(src, kx, ky)
	}
	return out
}

// filterPlane is resamplePlanes' two passes with the kernels laid out: kx over src's columns,
// ky over its rows. Each pass carries four sums at a time (four source rows through one row
// kernel; four column taps into one output row, then two, then one), which loads each weight
// once for four samples and cuts the loop and bounds-check work per sample: the filter is
// most of a JPEG variant's CPU (on photo.jpg's 320 and 480 px variants the luma plane filters
// in about 0.7 of the time of one sum at a time; TestFilterPlane checks the output is the same).
func filterPlane(src plane, kx, ky kernel) plane {
	// Rows first: only the source rows the column pass reads.
	r0 := ky.start[0]
	r1 := r0
	for i, w := range ky.w {
		r1 = max(r1, ky.start[i]+len(w))
	}
	w, h := len(kx.w), len(ky.w)
	mid := make([]byte, w*(r1-r0))
	yy := r0
	for ; yy+3 < r1; yy += 4 {
		rowA := src.pix[yy*src.stride : yy*src.stride+src.w]
		rowB := src.pix[(yy+1)*src.stride : (yy+1)*src.stride+src.w]
		rowC := src.pix[(yy+2)*src.stride : (yy+2)*src.stride+src.w]
		rowD := src.pix[(yy+3)*src.stride : (yy+3)*src.stride+src.w]
		o := (yy - r0) * w
		outA, outB, outC, outD := mid[o:o+w], mid[o+w:o+2*w], mid[o+2*w:o+3*w], mid[o+3*w:o+4*w]
		for i, ws := range kx.w[:len(outA)] {
			s := kx.start[i]
			a, b, c, d := rowA[s:s+len(ws)], rowB[s:s+len(ws)], rowC[s:s+len(ws)], rowD[s:s+len(ws)]
			var sa, sb, sc, sd int32
			for j, wt := range ws {
				sa += wt * int32(a[j])
				sb += wt * int32(b[j])
				sc += wt * int32(c[j])
				sd += wt * int32(d[j])
			}
			outA[i], outB[i], outC[i], outD[i] = clampByte(sa), clampByte(sb), clampByte(sc), clampByte(sd)
		}
	}
	for ; yy < r1; yy++ {
		row := src.pix[yy*src.stride : yy*src.stride+src.w]
		out := mid[(yy-r0)*w : (yy-r0)*w+w]
		for i, ws := range kx.w[:len(out)] {
			p := row[kx.start[i] : kx.start[i]+len(ws)]
			var s int32
			for j, wt := range ws {
				s += wt * int32(p[j])
			}
			out[i] = clampByte(s)
		}
	}
	// Then columns, a whole output row at a time, two taps (source rows) at once.
	dst := plane{pix: make([]byte, w*h), stride: w, w: w, h: h}
	acc := make([]int32, w)
	row := func(j int) []byte { return mid[(j-r0)*w : (j-r0)*w+w] }
	for oy, ws := range ky.w {
		clear(acc)
		s := ky.start[oy]
		j := 0
		for ; j+3 < len(ws); j += 4 {
			wa, wb, wc, wd := ws[j], ws[j+1], ws[j+2], ws[j+3]
			a, b, c, d := row(s+j), row(s+j+1), row(s+j+2), row(s+j+3)
			a, b, c, d = a[:len(acc)], b[:len(acc)], c[:len(acc)], d[:len(acc)]
			for i := range acc {
				acc[i] += wa*int32(a[i]) + wb*int32(b[i]) + wc*int32(c[i]) + wd*int32(d[i])
			}
		}
		for ; j+1 < len(ws); j += 2 {
			wa, wb := ws[j], ws[j+1]
			a, b := row(s+j), row(s+j+1)
			a, b = a[:len(acc)], b[:len(acc)]
			for i := range acc {
				acc[i] += wa*int32(a[i]) + wb*int32(b[i])
			}
		}
		if j < len(ws) {
			wt, a := ws[j], row(s + j)[:len(acc)]
			for i := range acc {
				acc[i] += wt * int32(a[i])
			}
		}
		out := dst.pix[oy*w : oy*w+w]
		for i, v := range acc[:len(out)] {
			out[i] = clampByte(v)
		}
	}
	return dst
}

// orientPlane turns a plane upright for EXIF orientation o (as orient).
func orientPlane(p plane, o int) plane {
	if o < 2 || o > 8 {
		return p
	}
	w, h := p.w, p.h
	dw, dh := w, h
	if o >= 5 {
		dw, dh = h, w
	}
	out := plane{pix: make([]byte, dw*dh), stride: dw, w: dw, h: dh}
	for y := range h {
		row := p.pix[y*p.stride : y*p.stride+w]
		for x, v := range row {
			dx, dy := oriented(o, x, y, w, h)
			out.pix[dy*dw+dx] = v
		}
	}
	return out
}

// chromaFactors is how many luma samples one chroma sample spans across and down.
func chromaFactors(r image.YCbCrSubsampleRatio) (int, int, bool) {
	switch r {
	case image.YCbCrSubsampleRatio444:
		return 1, 1, true
	case image.YCbCrSubsampleRatio422:
		return 2, 1, true
	case image.YCbCrSubsampleRatio420:
		return 2, 2, true
	case image.YCbCrSubsampleRatio440:
		return 1, 2, true
	case image.YCbCrSubsampleRatio411:
		return 4, 1, true
	case image.YCbCrSubsampleRatio410:
		return 4, 2, true
	}
	return 0, 0, false
}

// planeLayout is where an opaque source's variant comes from in stored orientation: the crop
// r of the stored pixels and the size tw x th it is scaled to before it is turned upright; ok
// is false when the variant has padding (render takes the RGBA path then).
func planeLayout(b image.Rectangle, o int, s Spec) (r image.Rectangle, tw, th int, ok bool) {
	sw, sh := b.Dx(), b.Dy()
	if o >= 5 {
		sw, sh = sh, sw
	}
	l := plan(sw, sh, s)
	if l.at != (image.Point{}) || l.canvas != image.Pt(l.scaleW, l.scaleH) {
		return r, 0, 0, false
	}
	tw, th = l.scaleW, l.scaleH
	if o >= 5 {
		tw, th = th, tw
	}
	return storedRect(o, b.Dx(), b.Dy(), l.crop), tw, th, true
}

// lumaAxes are the axes of a plane at full resolution for the crop r scaled to tw x th.
func lumaAxes(r image.Rectangle, tw, th int) (axis, axis) {
	sx, sy := float64(r.Dx())/float64(tw), float64(r.Dy())/float64(th)
	return axis{lo: r.Min.X, hi: r.Max.X, c0: float64(r.Min.X) + sx/2, step: sx, n: tw},
		axis{lo: r.Min.Y, hi: r.Max.Y, c0: float64(r.Min.Y) + sy/2, step: sy, n: th}
}

// renderGray is render for a gray source (a grayscale JPEG) whose variant has no padding: its
// one plane filtered as a JPEG's luma, answered as an *image.Gray (one JPEG component, a
// grayscale PNG; libwebp gets it as YUV with neutral chroma).
func renderGray(src *image.Gray, o int, s Spec) (*image.Gray, bool) {
	b := src.Bounds()
	if b.Min != (image.Point{}) {
		return nil, false
	}
	r, tw, th, ok := planeLayout(b, o, s)
	if !ok {
		return nil, false
	}
	x, y := lumaAxes(r, tw, th)
	p := orientPlane(resamplePlanes(x, y, plane{pix: src.Pix, stride: src.Stride, w: b.Dx(), h: b.Dy()})[0], o)
	return &image.Gray{Pix: p.pix, Stride: p.stride, Rect: image.Rect(0, 0, p.w, p.h)}, true
}

// renderYCbCr is render for an opaque YCbCr source whose variant has no padding: the luma and
// chroma planes are cropped and filtered apart (the chroma planes sampled at the output's
// 4:2:0 positions), turned upright, and answered as a 4:2:0 *image.YCbCr. ok is false when it
// does not apply (padding, an unusual layout): render takes the RGBA path then.
func renderYCbCr(src *image.YCbCr, o int, s Spec) (*image.YCbCr, bool) {
	hx, hy, known := chromaFactors(src.SubsampleRatio)
	b := src.Bounds()
	if !known || b.Min != (image.Point{}) {
		return nil, false
	}
	r, tw, th, ok := planeLayout(b, o, s)
	if !ok {
		return nil, false
	}
	sx, sy := float64(r.Dx())/float64(tw), float64(r.Dy())/float64(th)
	lx, ly := lumaAxes(r, tw, th)
	y := resamplePlanes(lx, ly, plane{pix: src.Y, stride: src.YStride, w: b.Dx(), h: b.Dy()})[0]
	// Output chroma sample i spans output luma 2i and 2i+1: its centre is output luma 2i+1,
	// source luma r.Min + (2i+1)*scale, and in source chroma that over the chroma factor.
	cw, ch := (tw+1)/2, (th+1)/2
	cx := axis{lo: r.Min.X / hx, hi: (r.Max.X + hx - 1) / hx, c0: (float64(r.Min.X) + sx) / float64(hx), step: 2 * sx / float64(hx), n: cw}
	cy := axis{lo: r.Min.Y / hy, hi: (r.Max.Y + hy - 1) / hy, c0: (float64(r.Min.Y) + sy) / float64(hy), step: 2 * sy / float64(hy), n: ch}
	scw, sch := (b.Dx()+hx-1)/hx, (b.Dy()+hy-1)/hy
	c := resamplePlanes(cx, cy, plane{pix: src.Cb, stride: src.CStride, w: scw, h: sch},
		plane{pix: src.Cr, stride: src.CStride, w: scw, h: sch})
	cb, cr := c[0], c[1]
	y, cb, cr = orientPlane(y, o), orientPlane(cb, o), orientPlane(cr, o)
	return &image.YCbCr{
		Y: y.pix, Cb: cb.pix, Cr: cr.pix, YStride: y.stride, CStride: cb.stride,
		SubsampleRatio: image.YCbCrSubsampleRatio420, Rect: image.Rect(0, 0, y.w, y.h),
	}, true
}
