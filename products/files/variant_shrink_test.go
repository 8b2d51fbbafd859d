package files

import (
	"bytes"
	"image"
	"image/color"
	_ "image/jpeg"
	_ "image/png"
	"os"
	"testing"

	xdraw "golang.org/x/image/draw"
)

// boxShrink averages whole blocks, the last row and column of smaller blocks included: a
// uniform source stays uniform (its edge blocks divided by their own pixel count), and the two
// halves of a split source stay apart, in every supported source model.
func TestBoxShrink(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		w, h int
		k    int
		r    image.Rectangle // the part shrunk ((0,0)-(w,h) when empty)
	}{
		{"edges smaller", 1001, 777, 7, image.Rectangle{}},
		{"exact", 640, 400, 4, image.Rectangle{}},
		{"one block", 9, 9, 9, image.Rectangle{}},
		{"a crop", 300, 200, 3, image.Rect(17, 5, 283, 190)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := tc.r
			if r.Empty() {
				r = image.Rect(0, 0, tc.w, tc.h)
			}
			red, blue := color.NRGBA{200, 10, 10, 255}, color.NRGBA{0, 0, 255, 128}
			src := image.NewNRGBA(image.Rect(0, 0, tc.w, tc.h))
			mid := r.Min.X + (r.Dx()+tc.k-1)/tc.k/2*tc.k // a block boundary
			for y := range tc.h {
				for x := range tc.w {
					if x < mid {
						src.SetNRGBA(x, y, red)
					} else {
						src.SetNRGBA(x, y, blue)
					}
				}
			}
			got := boxShrink(src, r, tc.k)
			want := image.Pt((r.Dx()+tc.k-1)/tc.k, (r.Dy()+tc.k-1)/tc.k)
			if got.Bounds().Size() != want {
				t.Fatalf("size %v, want %v", got.Bounds().Size(), want)
			}
			for y := range want.Y {
				for x := range want.X {
					c := color.NRGBAModel.Convert(got.At(x, y)).(color.NRGBA)
					w := red
					if r.Min.X+x*tc.k >= mid {
						w = blue
					}
					if diff(c.R, w.R) > 2 || diff(c.G, w.G) > 2 || diff(c.B, w.B) > 2 || diff(c.A, w.A) > 1 {
						t.Fatalf("pixel (%d,%d) = %v, want %v", x, y, c, w)
					}
				}
			}
		})
	}
}

func diff(a, b uint8) int {
	if a > b {
		return int(a - b)
	}
	return int(b - a)
}

// resample matches x/image/draw's Catmull-Rom within rounding on a photograph (reductions with
// and without the box shrink's range, a crop, and alpha), and keeps a uniform source uniform.
func TestResample(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		path string
		r    image.Rectangle // the part scaled (the whole image when empty)
		w, h int
	}{
		{"photo half", "testdata/photos/photo.jpg", image.Rectangle{}, 320, 200},
		{"photo 3/4", "testdata/photos/photo.jpg", image.Rectangle{}, 480, 300},
		{"photo crop", "testdata/photos/photo.jpg", image.Rect(120, 0, 520, 400), 100, 100},
		{"alpha", "testdata/photos/alpha.png", image.Rectangle{}, 211, 97},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data, err := os.ReadFile(tc.path)
			if err != nil {
				t.Fatal(err)
			}
			m, _, err := image.Decode(bytes.NewReader(data))
			if err != nil {
				t.Fatal(err)
			}
			src := image.NewRGBA(m.Bounds())
			xdraw.Draw(src, src.Bounds(), m, m.Bounds().Min, xdraw.Src)
			r := tc.r
			if r.Empty() {
				r = src.Bounds()
			}
			got := resample(src, r, tc.w, tc.h)
			want := image.NewRGBA(image.Rect(0, 0, tc.w, tc.h))
			xdraw.CatmullRom.Scale(want, want.Bounds(), src, r, xdraw.Src, nil)
			worst, total := 0, 0
			for i := range got.Pix {
				d := diff(got.Pix[i], want.Pix[i])
				worst, total = max(worst, d), total+d
			}
			if mean := float64(total) / float64(len(got.Pix)); worst > 3 || mean > 0.5 {
				t.Fatalf("differs from x/image/draw by up to %d (mean %.2f)", worst, mean)
			}
		})
	}
	t.Run("uniform", func(t *testing.T) {
		src := image.NewRGBA(image.Rect(0, 0, 97, 61))
		for i := range src.Pix {
			src.Pix[i] = []uint8{40, 20, 60, 128}[i%4]
		}
		got := resample(src, src.Bounds(), 13, 50)
		for i, v := range got.Pix {
			if want := []uint8{40, 20, 60, 128}[i%4]; v != want {
				t.Fatalf("byte %d = %d, want %d", i, v, want)
			}
		}
	})
}
