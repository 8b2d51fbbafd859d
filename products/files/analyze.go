package files

import (
	"bufio"
	"bytes"
	"errors"
	"image"
	"image/gif"
	"image/jpeg"
	"image/png"
	"io"

	"golang.org/x/image/webp"
)

// Measure is what the bytes of an upload turned out to be.
type Measure struct {
	Type   string
	Width  int
	Height int
}

// SniffType names the accepted image type the first bytes belong to, or "" for none. An SVG
// is recognised by its first non-space character being '<' (the XML check does the rest).
func SniffType(head []byte) string {
	switch {
	case bytes.HasPrefix(head, []byte("\x89PNG\r\n\x1a\n")):
		return "image/png"
	case bytes.HasPrefix(head, []byte{0xFF, 0xD8, 0xFF}):
		return "image/jpeg"
	case bytes.HasPrefix(head, []byte("GIF87a")), bytes.HasPrefix(head, []byte("GIF89a")):
		return "image/gif"
	case len(head) >= 12 && bytes.Equal(head[:4], []byte("RIFF")) && bytes.Equal(head[8:12], []byte("WEBP")):
		return "image/webp"
	}
	t := bytes.TrimPrefix(head, []byte("\xEF\xBB\xBF"))
	t = bytes.TrimLeft(t, " \t\r\n")
	if len(t) > 0 && t[0] == '<' {
		return "image/svg+xml"
	}
	return ""
}

// Analyze reads an upload's bytes to the end (so it can run beside the copy to storage) and
// checks them against want: the sniffed type must be want (ErrMismatch), an SVG must pass
// CheckSVG, a raster image's header must decode and stay under MaxPixels. It returns the
// measured type and dimensions.
func Analyze(r io.Reader, want string) (Measure, error) {
	br := bufio.NewReaderSize(r, 4096)
	head, _ := br.Peek(64)
	got := SniffType(head)
	if got == "" {
		return Measure{}, mismatch("the bytes are not a PNG, JPEG, GIF, WebP or SVG image")
	}
	if got != want {
		return Measure{}, mismatch("the bytes are " + got + ", the slot is for " + want)
	}
	m := Measure{Type: got}
	var err error
	if got == "image/svg+xml" {
		m.Width, m.Height, err = CheckSVG(br)
	} else {
		m.Width, m.Height, err = rasterSize(br, got)
	}
	if err != nil {
		return Measure{}, err
	}
	_, err = io.Copy(io.Discard, br)
	return m, err
}

// rasterSize decodes only the image header.
func rasterSize(r io.Reader, typ string) (int, int, error) {
	var cfg image.Config
	var err error
	switch typ {
	case "image/png":
		cfg, err = png.DecodeConfig(r)
	case "image/jpeg":
		cfg, err = jpeg.DecodeConfig(r)
	case "image/gif":
		cfg, err = gif.DecodeConfig(r)
	case "image/webp":
		cfg, err = webp.DecodeConfig(r)
	default:
		err = errors.New("unknown type")
	}
	if err != nil {
		return 0, 0, mismatch("the " + typ + " header cannot be read: " + err.Error())
	}
	if cfg.Width <= 0 || cfg.Height <= 0 {
		return 0, 0, mismatch("the image has no pixels")
	}
	if int64(cfg.Width)*int64(cfg.Height) > MaxPixels {
		return 0, 0, ErrPixelsTooMany
	}
	return cfg.Width, cfg.Height, nil
}
