package codec

import (
	"bytes"
	"compress/gzip"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
)

// WebP is encoded by libwebp 1.4.0 compiled to WebAssembly: the very module gen2brain/webp
// v0.5.5 embeds (wasm/webp.wasm.gz, copied from that module's lib/ with its licences; built by
// its lib/Makefile from libwebp and its lib/webp.c), run here on our own wazero runtime
// through the same exported functions (malloc, free, encode). gen2brain/webp instantiates the
// module anew for every Encode: a fresh linear memory that the encoder then grows page by
// page, each growth copying all of it, and garbage for the collector. That was about 0.5 ms
// of a 1 ms encode of a small image, and in make bench-variants' WebP phase the worker spent
// about as much CPU on instances, growing memory and collecting them as in libwebp itself
// (docs/performance.md "Variants"). Here an instance is kept for the next encode: its memory
// stays grown, and libwebp's encode frees all it allocates (lib/webp.c), so the instance is
// clean again after each call. An instance whose memory grew past keptMemory is closed
// instead of kept (a large variant's pages go back), and one whose call failed is never
// reused.

//go:embed wasm/webp.wasm.gz
var webpWasmGz []byte

// keptMemory is the most linear memory an idle WebP instance keeps: the encode of a 480 px
// square leaves 1 MB, of a 1024 px one 3 MB, of a 2048 px one 12 MB.
const keptMemory = 4 << 20

// The layouts lib/webp.c's encode takes: straight-alpha RGBA rows, or (libwebp's
// WEBP_YUV420A) the Y, U, V and A planes one after the other.
const (
	webpRGBA    = 0
	webpYUV420A = 4
)

// webpModule is libwebp's module compiled once per process (a few hundred milliseconds) on a
// runtime of its own; instances are made from it.
var webpModule = sync.OnceValues(func() (*webpCode, error) {
	ctx := context.Background()
	zr, err := gzip.NewReader(bytes.NewReader(webpWasmGz))
	if err != nil {
		return nil, err
	}
	bin, err := io.ReadAll(zr)
	if err != nil {
		return nil, err
	}
	rt := wazero.NewRuntime(ctx)
	if _, err := wasi_snapshot_preview1.Instantiate(ctx, rt); err != nil {
		return nil, err
	}
	cm, err := rt.CompileModule(ctx, bin)
	if err != nil {
		return nil, err
	}
	// Anonymous instances (no name), so any number of them live in the one runtime; no
	// stdout or stderr (libwebp writes none); no start function (the module is a reactor, and
	// gen2brain/webp runs none either).
	return &webpCode{rt: rt, cm: cm, cfg: wazero.NewModuleConfig().WithName("").WithStartFunctions()}, nil
})

// webpCode is the compiled module and how its instances are configured.
type webpCode struct {
	rt  wazero.Runtime
	cm  wazero.CompiledModule
	cfg wazero.ModuleConfig
}

// webpInstance is one instance of the module, used by one encode at a time.
type webpInstance struct {
	mod                  api.Module
	malloc, free, encode api.Function
}

func (c *webpCode) instance(ctx context.Context) (*webpInstance, error) {
	mod, err := c.rt.InstantiateModule(ctx, c.cm, c.cfg)
	if err != nil {
		return nil, err
	}
	in := &webpInstance{mod: mod, malloc: mod.ExportedFunction("malloc"), free: mod.ExportedFunction("free"), encode: mod.ExportedFunction("encode")}
	if in.malloc == nil || in.free == nil || in.encode == nil {
		mod.Close(ctx)
		return nil, errors.New("codec: the WebP module lacks malloc, free or encode")
	}
	return in, nil
}

// webpInstances keeps idle instances for the next encodes, up to max of them.
type webpInstances struct {
	mu   sync.Mutex
	idle []*webpInstance
	max  int
}

// get answers an idle instance or a new one.
func (p *webpInstances) get(ctx context.Context) (*webpInstance, error) {
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
	return code.instance(ctx)
}

// put keeps in for the next encode when its call succeeded and its memory is small, or
// closes it.
func (p *webpInstances) put(ctx context.Context, in *webpInstance, ok bool) {
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
	inPtr, err := in.alloc(ctx, len(data))
	if err != nil {
		return err
	}
	defer in.free.Call(ctx, inPtr)
	if !in.mod.Memory().Write(uint32(inPtr), data) {
		return errors.New("codec: webp: writing the pixels")
	}
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
	size, ok := in.mod.Memory().ReadUint64Le(uint32(sizePtr))
	if !ok || size == 0 {
		return errors.New("codec: webp encode wrote nothing")
	}
	webp, ok := in.mod.Memory().Read(uint32(res[0]), uint32(size))
	if !ok {
		return errors.New("codec: webp: reading the output")
	}
	_, err = out.Write(webp)
	return err
}

// alloc is the instance's malloc of n bytes.
func (in *webpInstance) alloc(ctx context.Context, n int) (uint64, error) {
	res, err := in.malloc.Call(ctx, uint64(n))
	if err != nil {
		return 0, fmt.Errorf("codec: webp malloc: %w", err)
	}
	if res[0] == 0 {
		return 0, fmt.Errorf("codec: webp malloc of %d bytes failed", n)
	}
	return res[0], nil
}
