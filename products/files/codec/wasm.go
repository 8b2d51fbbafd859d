package codec

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
)

// The WebP and AVIF encoders are the WebAssembly modules github.com/gen2brain/webp v0.5.5 and
// github.com/gen2brain/avif v0.4.4 embed (wasm/, copied from those modules' lib/ folders with
// their licences; each built by that folder's Makefile from libwebp 1.4.0, or libavif with
// aom, and the folder's C file), run here on runtimes of this package through the same
// exported functions (malloc, free, encode) those packages call. Why not through them: they
// instantiate their module anew for every encode, in a fresh Go slice that the encoder then
// grows page by page, every growth copying all of it (wazero's default memory), and leave it
// to the collector. For a small image that was most of the encode: 0.5 ms of WebP and about
// 12 ms of AVIF before any pixel (BenchmarkWebPEncode, BenchmarkAVIFEncode), and in make
// bench-variants' WebP phase the worker spent two thirds as much CPU on instances, memory
// growth and collecting them as in libwebp itself (docs/performance.md "Variants").

// wasmCode is one module compiled (once per process: a few hundred milliseconds, a second
// for AVIF) on a runtime of its own, and how its instances are made.
type wasmCode struct {
	rt  wazero.Runtime
	cm  wazero.CompiledModule
	cfg wazero.ModuleConfig
}

// compileGz compiles the gzipped module gz with WASI (the modules were built with wasi-sdk).
func compileGz(gz []byte) (*wasmCode, error) {
	ctx := context.Background()
	zr, err := gzip.NewReader(bytes.NewReader(gz))
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
	// Anonymous instances, so any number of them live in the one runtime; no stdout or
	// stderr; no start function (the modules are reactors; gen2brain's packages run none).
	return &wasmCode{rt: rt, cm: cm, cfg: wazero.NewModuleConfig().WithName("").WithStartFunctions()}, nil
}

// wasmInstance is one instance of a module, used by one encode at a time.
type wasmInstance struct {
	mod                  api.Module
	malloc, free, encode api.Function
}

// instance makes an instance. With mapped, its linear memory is mapped outside the Go heap
// (mappedMemory, where the system has it): it grows without copying and leaves no garbage.
func (c *wasmCode) instance(ctx context.Context, mapped bool) (*wasmInstance, error) {
	if mapped {
		ctx = experimental.WithMemoryAllocator(ctx, experimental.MemoryAllocatorFunc(newMappedMemory))
	}
	mod, err := c.rt.InstantiateModule(ctx, c.cm, c.cfg)
	if err != nil {
		return nil, err
	}
	in := &wasmInstance{mod: mod, malloc: mod.ExportedFunction("malloc"), free: mod.ExportedFunction("free"), encode: mod.ExportedFunction("encode")}
	if in.malloc == nil || in.free == nil || in.encode == nil {
		mod.Close(ctx)
		return nil, errors.New("codec: the module lacks malloc, free or encode")
	}
	return in, nil
}

// alloc is the instance's malloc of n bytes.
func (in *wasmInstance) alloc(ctx context.Context, n int) (uint64, error) {
	res, err := in.malloc.Call(ctx, uint64(n))
	if err != nil {
		return 0, fmt.Errorf("codec: malloc: %w", err)
	}
	if res[0] == 0 {
		return 0, fmt.Errorf("codec: malloc of %d bytes failed", n)
	}
	return res[0], nil
}

// write copies data into a new allocation of the instance.
func (in *wasmInstance) write(ctx context.Context, data []byte) (uint64, error) {
	p, err := in.alloc(ctx, len(data))
	if err != nil {
		return 0, err
	}
	if !in.mod.Memory().Write(uint32(p), data) {
		return 0, errors.New("codec: writing the pixels into the module")
	}
	return p, nil
}

// output writes to w the size bytes at p, the size read as a 64-bit integer at sizePtr.
func (in *wasmInstance) output(w io.Writer, p, sizePtr uint64) error {
	size, ok := in.mod.Memory().ReadUint64Le(uint32(sizePtr))
	if !ok || size == 0 {
		return errors.New("codec: the encoder wrote nothing")
	}
	out, ok := in.mod.Memory().Read(uint32(p), uint32(size))
	if !ok {
		return errors.New("codec: reading the encoder's output")
	}
	_, err := w.Write(out)
	return err
}

// mappedMemory is a linear memory mapped outside the Go heap: the module's largest size is
// reserved at once (address space only), and pages are committed when the encoder first
// touches them and returned when the instance closes.
type mappedMemory struct {
	mem   []byte // the whole mapping
	unmap func()
	heap  []byte // where there is no mapping: a Go slice grown as wazero grows its own
}

func newMappedMemory(_, max uint64) experimental.LinearMemory {
	m := &mappedMemory{}
	m.mem, m.unmap = mapMemory(max)
	return m
}

// Reallocate implements experimental.LinearMemory.
func (m *mappedMemory) Reallocate(size uint64) []byte {
	if m.unmap != nil {
		if size > uint64(len(m.mem)) {
			return nil
		}
		return m.mem[:size]
	}
	if size > uint64(cap(m.heap)) {
		m.heap = append(m.heap[:cap(m.heap)], make([]byte, size-uint64(cap(m.heap)))...)
	}
	m.heap = m.heap[:size]
	return m.heap
}

// Free implements experimental.LinearMemory: the instance closed.
func (m *mappedMemory) Free() {
	if m.unmap != nil {
		m.unmap()
		m.unmap, m.mem = nil, nil
	}
	m.heap = nil
}
