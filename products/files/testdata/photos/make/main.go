// Command make writes the test photographs of products/files/testdata/photos from the
// wallpapers of Debian's gnome-backgrounds package (4096x4096 WebP renders), downscaled to a
// few tens of KB each. It is kept so the files can be made again:
//
//	apt-get install -y gnome-backgrounds
//	go run ./products/files/testdata/photos/make /usr/share/backgrounds/gnome products/files/testdata/photos
//
// cmyk.jpg is not made here (Go cannot write CMYK JPEGs): ImageMagick made it from photo.jpg
// (convert photo.jpg -colorspace CMYK cmyk.jpg).
package main

import (
	"bytes"
	"encoding/binary"
	"image"
	"image/color"
	"image/color/palette"
	"image/draw"
	"image/gif"
	"image/jpeg"
	"image/png"
	"log"
	"os"
	"path/filepath"

	xdraw "golang.org/x/image/draw"
	"golang.org/x/image/webp"
)

func main() {
	if len(os.Args) != 3 {
		log.Fatal("usage: make <gnome backgrounds folder> <output folder>")
	}
	in, out := os.Args[1], os.Args[2]
	load := func(name string, w, h int) *image.RGBA {
		f, err := os.Open(filepath.Join(in, name))
		if err != nil {
			log.Fatal(err)
		}
		defer f.Close()
		src, err := webp.Decode(f)
		if err != nil {
			log.Fatal(err)
		}
		// A w:h crop of the middle, scaled to w x h.
		b := src.Bounds()
		cw, ch := b.Dx(), b.Dx()*h/w
		if ch > b.Dy() {
			cw, ch = b.Dy()*w/h, b.Dy()
		}
		r := image.Rect((b.Dx()-cw)/2, (b.Dy()-ch)/2, (b.Dx()-cw)/2+cw, (b.Dy()-ch)/2+ch)
		dst := image.NewRGBA(image.Rect(0, 0, w, h))
		xdraw.CatmullRom.Scale(dst, dst.Bounds(), src, r, xdraw.Src, nil)
		return dst
	}
	write := func(name string, data []byte) {
		if err := os.WriteFile(filepath.Join(out, name), data, 0o644); err != nil {
			log.Fatal(err)
		}
		log.Printf("%s: %d bytes", name, len(data))
	}
	jpg := func(m image.Image, q int) []byte {
		var b bytes.Buffer
		if err := jpeg.Encode(&b, m, &jpeg.Options{Quality: q}); err != nil {
			log.Fatal(err)
		}
		return b.Bytes()
	}
	pngOf := func(m image.Image) []byte {
		var b bytes.Buffer
		if err := png.Encode(&b, m); err != nil {
			log.Fatal(err)
		}
		return b.Bytes()
	}

	// photo.jpg: an upright 640x400 photograph.
	wood := load("wood-l.webp", 640, 400)
	write("photo.jpg", jpg(wood, 80))

	// rotated.jpg: the same picture stored turned 90° anticlockwise (400x640) with EXIF
	// orientation 6 (turn 90° clockwise to display), a GPS tag and a comment: a variant must
	// show it as photo.jpg and carry none of it.
	stored := image.NewRGBA(image.Rect(0, 0, 400, 640))
	for y := 0; y < 400; y++ {
		for x := 0; x < 640; x++ {
			stored.Set(y, 639-x, wood.At(x, y))
		}
	}
	write("rotated.jpg", withExif(jpg(stored, 80), 6))

	// gray.jpg: a grayscale photograph.
	lic := load("licorice-l.webp", 480, 320)
	gray := image.NewGray(lic.Bounds())
	draw.Draw(gray, gray.Bounds(), lic, image.Point{}, draw.Src)
	write("gray.jpg", jpg(gray, 80))

	// alpha.png: a photograph fading to transparent towards its edges.
	adw := load("adwaita-l.webp", 320, 240)
	alpha := image.NewNRGBA(adw.Bounds())
	for y := 0; y < 240; y++ {
		for x := 0; x < 320; x++ {
			c := adw.RGBAAt(x, y)
			d := min(x, 319-x, y, 239-y)
			alpha.SetNRGBA(x, y, color.NRGBA{c.R, c.G, c.B, uint8(min(255, d*6))})
		}
	}
	write("alpha.png", pngOf(alpha))

	// palette.png: a paletted PNG (256 colours, dithered).
	grid := load("grid-l.webp", 300, 300)
	pal := image.NewPaletted(grid.Bounds(), palette.Plan9)
	draw.FloydSteinberg.Draw(pal, pal.Bounds(), grid, image.Point{})
	write("palette.png", pngOf(pal))

	// anim.gif: three frames; variants use the first.
	var g gif.GIF
	for i, name := range []string{"truchet-l.webp", "pixels-l.webp", "symbolic-l.webp"} {
		m := load(name, 200, 150)
		p := image.NewPaletted(m.Bounds(), palette.Plan9)
		draw.FloydSteinberg.Draw(p, p.Bounds(), m, image.Point{})
		g.Image = append(g.Image, p)
		g.Delay = append(g.Delay, 50+i)
	}
	var b bytes.Buffer
	if err := gif.EncodeAll(&b, &g); err != nil {
		log.Fatal(err)
	}
	write("anim.gif", b.Bytes())
}

// withExif inserts after SOI an APP1 Exif segment (orientation o, a GPS IFD with a latitude
// reference) and a COM comment segment.
func withExif(j []byte, o uint16) []byte {
	le := binary.LittleEndian
	var t bytes.Buffer
	t.WriteString("II")
	binary.Write(&t, le, uint16(42))
	binary.Write(&t, le, uint32(8))
	// IFD0 at 8: two entries: Orientation, GPSInfo pointer.
	binary.Write(&t, le, uint16(2))
	binary.Write(&t, le, [6]uint16{0x0112, 3, 1, 0, o, 0}) // tag, SHORT, count 1 (two halves), value
	gpsAt := uint32(8 + 2 + 2*12 + 4)
	binary.Write(&t, le, []uint16{0x8825, 4})
	binary.Write(&t, le, uint32(1))
	binary.Write(&t, le, gpsAt)
	binary.Write(&t, le, uint32(0)) // no next IFD
	// GPS IFD: GPSLatitudeRef "N".
	binary.Write(&t, le, uint16(1))
	binary.Write(&t, le, []uint16{0x0001, 2})
	binary.Write(&t, le, uint32(2))
	t.Write([]byte{'N', 0, 0, 0})
	binary.Write(&t, le, uint32(0))
	app1 := append([]byte("Exif\x00\x00"), t.Bytes()...)
	com := []byte("gatehouse-secret-comment")
	var out bytes.Buffer
	out.Write(j[:2])
	out.Write([]byte{0xFF, 0xE1})
	binary.Write(&out, binary.BigEndian, uint16(len(app1)+2))
	out.Write(app1)
	out.Write([]byte{0xFF, 0xFE})
	binary.Write(&out, binary.BigEndian, uint16(len(com)+2))
	out.Write(com)
	out.Write(j[2:])
	return out.Bytes()
}
