package codec

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"image"
	"image/draw"
	"io"
	"sync"
)

// libavif with aom (wasm.go): an instance per encode, as gen2brain/avif makes, but with its
// linear memory mapped outside the Go heap (mappedMemory), so the tens of megabytes aom
// allocates are neither copied at each growth nor left to the collector. Instances are not
// kept: gen2brain's lib/encode.c hands the caller's pixels to libavif as its own buffer, which
// libavif frees at the end of the call while the buffer it allocated for them leaks; an
// instance used again would leak an image's worth of memory at every call.

//go:embed wasm/avif-encode.wasm.gz
var avifWasmGz []byte

// avifModule compiles libavif's encoder module once per process (about a second).
var avifModule = sync.OnceValues(func() (*wasmCode, error) { return compileGz(avifWasmGz) })

// avifYUV420 is libavif's AVIF_PIXEL_FORMAT_YUV420, the chroma subsampling asked for.
const avifYUV420 = 3

// encodeAVIF writes m as an AVIF at quality and alphaQuality (0-100) and speed (0-10), in
// YUV 4:2:0 converted by libavif from m's premultiplied RGBA.
func encodeAVIF(out io.Writer, m image.Image, quality, alphaQuality, speed int) error {
	code, err := avifModule()
	if err != nil {
		return fmt.Errorf("codec: compiling the AVIF module: %w", err)
	}
	ctx := context.Background()
	in, err := code.instance(ctx, true)
	if err != nil {
		return err
	}
	defer in.mod.Close(ctx)
	b := m.Bounds()
	rgba, ok := m.(*image.RGBA)
	if !ok || rgba.Stride != 4*b.Dx() {
		rgba = image.NewRGBA(image.Rectangle{Max: b.Size()})
		draw.Draw(rgba, rgba.Bounds(), m, b.Min, draw.Src)
	}
	// libavif frees this buffer itself (see above): it is not freed here.
	inPtr, err := in.write(ctx, rgba.Pix[:4*b.Dx()*b.Dy()])
	if err != nil {
		return err
	}
	sizePtr, err := in.alloc(ctx, 8)
	if err != nil {
		return err
	}
	res, err := in.encode.Call(ctx, inPtr, uint64(b.Dx()), uint64(b.Dy()), sizePtr, uint64(quality), uint64(alphaQuality), uint64(speed), avifYUV420)
	if err != nil {
		return fmt.Errorf("codec: avif encode: %w", err)
	}
	if res[0] == 0 {
		return errors.New("codec: avif encode failed")
	}
	return in.output(out, res[0], sizePtr)
}
