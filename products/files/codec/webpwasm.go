package codec

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"sync"
)

// libwebp (wasm.go): an instance is kept for the next encode, so its memory stays grown and
// the module is not instantiated again; libwebp's encode frees all it allocates (gen2brain's
// lib/webp.c), so an instance is as clean after a call as before it. One whose memory grew
// past keptMemory is closed instead of kept (a large variant's pages go back), and one whose
// call failed is never reused.

//go:embed wasm/webp.wasm.gz
var webpWasmGz []byte

// webpModule compiles libwebp's module once per process.
var webpModule = sync.OnceValues(func() (*wasmCode, error) { return compileGz(webpWasmGz) })

// keptMemory is the most linear memory an idle WebP instance keeps: the encode of a 480 px
// square leaves 1 MB, of a 1024 px one 3 MB, of a 2048 px one 12 MB.
const keptMemory = 4 << 20

// The layouts lib/webp.c's encode takes: straight-alpha RGBA rows, or (libwebp's
// WEBP_YUV420A) the Y, U, V and A planes one after the other.
const (
	webpRGBA    = 0
	webpYUV420A = 4
)

// webpInstances keeps idle instances for the next encodes, up to max of them.
type webpInstances struct {
	mu   sync.Mutex
	idle []*wasmInstance
	max  int
}

// get answers an idle instance or a new one.
func (p *webpInstances) get(ctx context.Context) (*wasmInstance, error) {
	if p != nil {
		p.mu.Lock()
		if n := len(p.idle); n > 0 {
			in := p.idle[n-1]
			p.idle = p.idle[:n-1]
			p.mu.Unlock()
			return in, nil
		}
		p.mu.Unlock()
	}
	code, err := webpModule()
	if err != nil {
		return nil, fmt.Errorf("codec: compiling the WebP module: %w", err)
	}
	return code.instance(ctx, true)
}

// put keeps in for the next encode when its call succeeded and its memory is small, or
// closes it.
func (p *webpInstances) put(ctx context.Context, in *wasmInstance, ok bool) {
	if p != nil && ok && in.mod.Memory().Size() <= keptMemory {
		p.mu.Lock()
		if len(p.idle) < p.max {
			p.idle = append(p.idle, in)
			p.mu.Unlock()
			return
		}
		p.mu.Unlock()
	}
	in.mod.Close(ctx)
}

// encodeWebP writes a lossy WebP at quality (0-100) and method (0-6) of the w x h pixels in
// data, laid out as colorspace says (webpRGBA or webpYUV420A).
func (p *webpInstances) encodeWebP(out io.Writer, data []byte, w, h, colorspace, quality, method int) (err error) {
	ctx := context.Background()
	in, err := p.get(ctx)
	if err != nil {
		return err
	}
	defer func() { p.put(ctx, in, err == nil) }()
	inPtr, err := in.write(ctx, data)
	if err != nil {
		return err
	}
	defer in.free.Call(ctx, inPtr)
	sizePtr, err := in.alloc(ctx, 8)
	if err != nil {
		return err
	}
	defer in.free.Call(ctx, sizePtr)
	res, err := in.encode.Call(ctx, inPtr, uint64(w), uint64(h), sizePtr, uint64(colorspace), uint64(quality), uint64(method), 0, 0)
	if err != nil {
		return fmt.Errorf("codec: webp encode: %w", err)
	}
	if res[0] == 0 {
		return errors.New("codec: webp encode failed")
	}
	defer in.free.Call(ctx, res[0])
	return in.output(out, res[0], sizePtr)
}
