package files

import (
	"bytes"
	"image"
	"image/color"
	"image/jpeg"
	"os"
	"testing"

	xdraw "golang.org/x/image/draw"
	"golang.org/x/image/webp"

	"github.com/gatehouse-dev/gatehouse/products/files/codec"
)

// channelDiff is the mean and the largest absolute difference of two images' R, G and B over
// a's bounds (b at least as large).
func channelDiff(a, b image.Image) (mean float64, worst int) {
	ab, bb := a.Bounds(), b.Bounds()
	total, n := 0, 0
	for y := range ab.Dy() {
		for x := range ab.Dx() {
			c1 := color.NRGBAModel.Convert(a.At(ab.Min.X+x, ab.Min.Y+y)).(color.NRGBA)
			c2 := color.NRGBAModel.Convert(b.At(bb.Min.X+x, bb.Min.Y+y)).(color.NRGBA)
			for _, d := range []int{int(c1.R) - int(c2.R), int(c1.G) - int(c2.G), int(c1.B) - int(c2.B)} {
				d = max(d, -d)
				total, worst = total+d, max(worst, d)
				n++
			}
		}
	}
	return float64(total) / float64(n), worst
}

// A JPEG's variant rendered on its YCbCr planes has the pixels of the RGBA path (the
// reference): every fit without padding, odd sizes, a crop, EXIF orientation (rotated.jpg),
// a 4:4:4 JPEG, and a large original that is box-shrunk first.
func TestRenderYCbCr(t *testing.T) {
	t.Parallel()
	read := func(path string) []byte {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	photo := read("testdata/photos/photo.jpg")
	m, err := jpeg.Decode(bytes.NewReader(photo))
	if err != nil {
		t.Fatal(err)
	}
	reencode := func(w, h, q int) []byte { // photo.jpg scaled to w x h, as a JPEG
		big := image.NewRGBA(image.Rect(0, 0, w, h))
		xdraw.CatmullRom.Scale(big, big.Bounds(), m, m.Bounds(), xdraw.Src, nil)
		var buf bytes.Buffer
		if err := jpeg.Encode(&buf, big, &jpeg.Options{Quality: q}); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	large := reencode(2560, 1600, 90)
	for _, tc := range []struct {
		name string
		data []byte
		spec Spec
	}{
		{"cover 100x100", photo, Spec{Width: 100, Height: 100, Fit: "cover"}},
		{"cover 320x320", photo, Spec{Width: 320, Height: 320, Fit: "cover"}},
		{"inside 480", photo, Spec{Width: 480, Fit: "inside"}},
		{"inside odd", photo, Spec{Width: 333, Height: 101, Fit: "inside"}},
		{"cover odd", photo, Spec{Width: 37, Height: 51, Fit: "cover"}},
		{"cover larger than the source", photo, Spec{Width: 1000, Height: 99, Fit: "cover"}},
		{"contain without padding", photo, Spec{Width: 160, Height: 100, Fit: "contain"}},
		{"rotated cover", read("testdata/photos/rotated.jpg"), Spec{Width: 90, Height: 60, Fit: "cover"}},
		{"rotated inside", read("testdata/photos/rotated.jpg"), Spec{Width: 121, Fit: "inside"}},
		{"large cover", large, Spec{Width: 100, Height: 100, Fit: "cover"}},
		{"large inside", large, Spec{Width: 480, Fit: "inside"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src, err := decodeSource(tc.data, "image/jpeg", 40<<20)
			if err != nil {
				t.Fatal(err)
			}
			o := Orientation(tc.data, "image/jpeg")
			got, ok := renderYCbCr(src.(*image.YCbCr), o, tc.spec)
			if !ok {
				t.Fatal("the YCbCr path refused a variant without padding")
			}
			want := renderRGBA(src, o, tc.spec)
			if got.Bounds() != want.Bounds() {
				t.Fatalf("bounds %v, the RGBA path's %v", got.Bounds(), want.Bounds())
			}
			mean, worst := channelDiff(got, want)
			t.Logf("%v: %.2f per channel, up to %d", got.Bounds().Size(), mean, worst)
			if mean > 1.2 || worst > 16 {
				t.Errorf("differs from the RGBA path by %.2f per channel (up to %d)", mean, worst)
			}
		})
	}
	src, err := decodeSource(photo, "image/jpeg", 40<<20)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := renderYCbCr(src.(*image.YCbCr), 1, Spec{Width: 100, Height: 100, Fit: "contain"}); ok {
		t.Error("the YCbCr path took a variant with padding")
	}
	// A grayscale JPEG on its one plane, in every orientation.
	gray, err := decodeSource(read("testdata/photos/gray.jpg"), "image/jpeg", 40<<20)
	if err != nil {
		t.Fatal(err)
	}
	for o := 1; o <= 8; o++ {
		for _, spec := range []Spec{{Width: 100, Height: 100, Fit: "cover"}, {Width: 333, Fit: "inside"}, {Width: 40, Height: 96, Fit: "cover"}, {Width: 41, Height: 97, Fit: "cover"}} {
			got, ok := renderGray(gray.(*image.Gray), o, spec)
			if !ok {
				t.Fatal("the gray path refused a variant without padding")
			}
			want := renderRGBA(gray, o, spec)
			if got.Bounds() != want.Bounds() {
				t.Fatalf("orientation %d %v: bounds %v, the RGBA path's %v", o, spec, got.Bounds(), want.Bounds())
			}
			if mean, worst := channelDiff(got, want); mean > 1.2 || worst > 16 {
				t.Errorf("orientation %d %v: differs from the RGBA path by %.2f per channel (up to %d)", o, spec, mean, worst)
			}
		}
	}
	if _, ok := renderGray(gray.(*image.Gray), 1, Spec{Width: 100, Height: 100, Fit: "contain"}); ok {
		t.Error("the gray path took a variant with padding")
	}
	// Box-shrunk with a partial last block (203 rows by 2): within rounding of x/image/draw's
	// Catmull-Rom of the same crop, on the planes and through RGBA.
	for _, src := range []image.Image{gray, src} {
		spec := Spec{Width: 97, Height: 41, Fit: "cover"}
		var got image.Image
		switch t := src.(type) {
		case *image.Gray:
			got, _ = renderGray(t, 1, spec)
		case *image.YCbCr:
			got, _ = renderYCbCr(t, 1, spec)
		}
		r, tw, th, _ := planeLayout(src.Bounds(), 1, spec)
		ref := image.NewRGBA(image.Rect(0, 0, tw, th))
		xdraw.CatmullRom.Scale(ref, ref.Bounds(), src, r, xdraw.Src, nil)
		if mean, worst := channelDiff(got, ref); mean > 1.2 || worst > 16 {
			t.Errorf("%T to %v differs from x/image/draw by %.2f per channel (up to %d)", src, spec, mean, worst)
		}
		if mean, worst := channelDiff(renderRGBA(src, 1, spec), ref); mean > 1.2 || worst > 16 {
			t.Errorf("%T to %v through RGBA differs from x/image/draw by %.2f per channel (up to %d)", src, spec, mean, worst)
		}
	}
}

// The WebP of a YCbCr variant (libwebp's YUV input, studio range) decodes to the colours of the
// WebP of the same pixels as RGBA (libwebp's own conversion), and JPEG's to the JPEG's.
func TestEncodeYCbCr(t *testing.T) {
	t.Parallel()
	photo, err := os.ReadFile("testdata/photos/photo.jpg")
	if err != nil {
		t.Fatal(err)
	}
	src, err := decodeSource(photo, "image/jpeg", 40<<20)
	if err != nil {
		t.Fatal(err)
	}
	gray, err := decodeSource(mustRead(t, "testdata/photos/gray.jpg"), "image/jpeg", 40<<20)
	if err != nil {
		t.Fatal(err)
	}
	for _, spec := range []Spec{{Width: 320, Height: 320, Fit: "cover"}, {Width: 101, Height: 77, Fit: "cover"}, {Width: 99, Fit: "inside"}} {
		var y image.Image
		var ok bool
		if spec.Fit == "inside" {
			y, ok = renderGray(gray.(*image.Gray), 1, spec)
		} else {
			y, ok = renderYCbCr(src.(*image.YCbCr), 1, spec)
		}
		if !ok {
			t.Fatal("no plane path")
		}
		rgba := image.NewNRGBA(y.Bounds())
		xdraw.Draw(rgba, rgba.Bounds(), y, image.Point{}, xdraw.Src)
		for _, format := range []string{"webp", "jpeg", "png", "avif"} {
			var a, b bytes.Buffer
			if err := (codec.Codecs{}).Encode(&a, y, format, 90); err != nil {
				t.Fatal(err)
			}
			if err := (codec.Codecs{}).Encode(&b, rgba, format, 90); err != nil {
				t.Fatal(err)
			}
			if format != "webp" {
				continue // encoded without error; their decoders are checked by the variant tests
			}
			ma, err := webp.Decode(bytes.NewReader(a.Bytes()))
			if err != nil {
				t.Fatal(err)
			}
			mb, err := webp.Decode(bytes.NewReader(b.Bytes()))
			if err != nil {
				t.Fatal(err)
			}
			mean, worst := channelDiff(ma, mb)
			t.Logf("%v: WebP %.2f per channel, up to %d", spec, mean, worst)
			if mean > 1.5 {
				t.Errorf("%v: the WebP of the planes differs from the WebP of RGBA by %.2f per channel", spec, mean)
			}
		}
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// filterPlaneLoops is filterPlane written plainly, one sum at a time: the reference its
// four-at-a-time passes must match sample for sample.
func filterPlaneLoops(src plane, kx, ky kernel) plane {
	r0 := ky.start[0]
	r1 := r0
	for i, w := range ky.w {
		r1 = max(r1, ky.start[i]+len(w))
	}
	w, h := len(kx.w), len(ky.w)
	mid := make([]byte, w*(r1-r0))
	for yy := r0; yy < r1; yy++ {
		for i, ws := range kx.w {
			var s int32
			for j, wt := range ws {
				s += wt * int32(src.pix[yy*src.stride+kx.start[i]+j])
			}
			mid[(yy-r0)*w+i] = clampByte(s)
		}
	}
	dst := plane{pix: make([]byte, w*h), stride: w, w: w, h: h}
	for oy, ws := range ky.w {
		for i := range w {
			var s int32
			for j, wt := range ws {
				s += wt * int32(mid[(ky.start[oy]+j-r0)*w+i])
			}
			dst.pix[oy*w+i] = clampByte(s)
		}
	}
	return dst
}

// filterPlane's unrolled passes give exactly the plain loops' samples: row counts and tap
// counts that are and are not multiples of four (reductions and enlargements, a crop, a
// padded stride), on a plane of noise and edges.
func TestFilterPlane(t *testing.T) {
	t.Parallel()
	src := plane{pix: make([]byte, 203*131), stride: 203, w: 197, h: 131}
	for i := range src.pix {
		src.pix[i] = uint8(i*7 + i/203*13 + (i%17)*(i%5)*11)
	}
	for _, tc := range []struct {
		name   string
		x0, x1 int // the crop's columns
		y0, y1 int // and rows
		w, h   int // the output
	}{
		{"quarter", 0, 197, 0, 131, 49, 33},
		{"a fifth less", 0, 197, 0, 131, 158, 105},
		{"half, cropped", 10, 190, 3, 127, 90, 62},
		{"same size", 0, 197, 0, 131, 197, 131},
		{"enlarged", 50, 80, 40, 61, 97, 67},
		{"one row", 0, 197, 60, 61, 40, 1},
		{"a column", 5, 6, 0, 131, 1, 30},
	} {
		t.Run(tc.name, func(t *testing.T) {
			x, y := lumaAxes(image.Rect(tc.x0, tc.y0, tc.x1, tc.y1), tc.w, tc.h)
			kx, ky := catmullRomAxis(x), catmullRomAxis(y)
			got, want := filterPlane(src, kx, ky), filterPlaneLoops(src, kx, ky)
			if got.w != want.w || got.h != want.h || !bytes.Equal(got.pix, want.pix) {
				t.Fatalf("filterPlane differs from the plain loops (%dx%d, want %dx%d)", got.w, got.h, want.w, want.h)
			}
		})
	}
}

// shrinkAxes averages each k x k block (the last row and column of blocks smaller), rounded,
// halving included (its own loop): against the plain average of every block, for crops of
// even and odd sizes and offsets.
func TestShrinkAxes(t *testing.T) {
	t.Parallel()
	src := plane{pix: make([]byte, 211*97), stride: 211, w: 205, h: 97}
	for i := range src.pix {
		src.pix[i] = uint8(i*31 + i/211*7 + (i%13)*(i%3)*17)
	}
	for _, tc := range []struct {
		name           string
		x0, x1, y0, y1 int // the crop
		nx, ny         int // the output's size
	}{
		{"halving, even", 0, 200, 0, 96, 50, 24},
		{"halving, odd", 3, 204, 1, 96, 45, 20},
		{"a third", 0, 205, 0, 97, 16, 16},
		{"a seventh, cropped", 10, 190, 5, 90, 6, 6},
	} {
		t.Run(tc.name, func(t *testing.T) {
			x, y := lumaAxes(image.Rect(tc.x0, tc.y0, tc.x1, tc.y1), tc.nx, tc.ny)
			got, _, _ := shrinkAxes(src, x, y)
			k := int(min(x.step, y.step) / 2)
			if k < 2 {
				t.Fatalf("the case shrinks by %d", k)
			}
			w, h := (tc.x1-tc.x0+k-1)/k, (tc.y1-tc.y0+k-1)/k
			if got.w != w || got.h != h {
				t.Fatalf("%dx%d, want %dx%d", got.w, got.h, w, h)
			}
			for oy := range h {
				for ox := range w {
					sum, n := 0, 0
					for yy := tc.y0 + oy*k; yy < min(tc.y1, tc.y0+(oy+1)*k); yy++ {
						for xx := tc.x0 + ox*k; xx < min(tc.x1, tc.x0+(ox+1)*k); xx++ {
							sum, n = sum+int(src.pix[yy*src.stride+xx]), n+1
						}
					}
					if want := (sum + n/2) / n; int(got.pix[oy*got.stride+ox]) != want {
						t.Fatalf("block (%d, %d) of %d: %d, want %d", ox, oy, k, got.pix[oy*got.stride+ox], want)
					}
				}
			}
		})
	}
}
