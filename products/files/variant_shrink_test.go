package files

import (
	"image"
	"image/color"
	"testing"
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
