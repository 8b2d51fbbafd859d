package host

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"sync/atomic"
	"time"

	"github.com/gatehouse-dev/gatehouse/plugins/guard"
	"github.com/tetratelabs/wazero"
)

// Compilation in two tiers. wazero's optimizing compiler takes seconds for
// a module built by Go (2.4 MB: 2.6 s on the loaded test machine), its
// interpreter a tenth of that. A module new to the host therefore serves
// from the interpreter as soon as the interpreter has compiled it, while
// the optimizing compiler works in the background; once the machine code
// is ready, every plugin of the module starts an instance on it and closes
// its interpreted ones (calls in flight finish where they are). A module
// this host, or an earlier process on the same Options.CacheDir, compiled
// to machine code before (its mark, below) skips the interpreter: wazero
// reads the machine code from its cache in milliseconds.
//
// Both tiers run the same guarded bytes in runtimes set up alike, so the
// guard stops a runaway call, cappedMemory holds guest memory and the
// scheduler charges guest time on either; only the speed differs.

// marksDir, under Options.CacheDir, holds an empty file per module that
// wazero has compiled to machine code into its cache there, named by the
// guarded module's digest, the wazero version and the platform.
const marksDir = "gatehouse-compiled"

// compiledKey names a compiled module: a project's runtimes compile their
// own copy.
type compiledKey struct {
	project string
	sum     [32]byte // of the module as uploaded
}

// compiledEntry is a compiled module shared by every registration of the
// same bytes in one project. It is closed when no registration uses it and
// the LRU has let it go.
type compiledEntry struct {
	key  compiledKey
	mark string // its file in marksDir ("": the host keeps no marks)
	// interp is the interpreter's code, nil when the machine code was
	// ready at once; native is the machine code, once compiled.
	interp wazero.CompiledModule
	native atomic.Pointer[wazero.CompiledModule]
	// done is closed when the module has its final code: at once, or when
	// the background compilation ended (compiled or failed).
	done chan struct{}

	refs    int  // guarded by Host.mu
	inCache bool // guarded by Host.mu
	closed  bool // guarded by Host.mu
}

// code returns what a new instance should run: the machine code when it is
// ready, the interpreter's code until then.
func (e *compiledEntry) code() (mod wazero.CompiledModule, native bool) {
	if m := e.native.Load(); m != nil {
		return *m, true
	}
	return e.interp, false
}

// close releases the entry's code. Called with Host.mu held.
func (e *compiledEntry) close() {
	e.closed = true
	ctx := context.Background()
	if e.interp != nil {
		_ = e.interp.Close(ctx)
	}
	if m := e.native.Load(); m != nil {
		_ = (*m).Close(ctx)
	}
}

// compile returns the compiled module for wasm in project p, from the LRU
// when it is there, and takes a reference on it. A module new to the host
// comes back interpreted, with its machine code on the way (compileNative),
// unless Options asked for machine code first or its mark says wazero's
// cache has it.
func (h *Host) compile(ctx context.Context, p *project, wasm []byte) (*compiledEntry, error) {
	key := compiledKey{project: p.id, sum: sha256.Sum256(wasm)}
	h.compileMu.Lock()
	defer h.compileMu.Unlock()
	h.mu.Lock()
	if e, ok := h.compiled.Get(key); ok {
		e.refs++
		h.mu.Unlock()
		return e, nil
	}
	h.mu.Unlock()
	guarded, err := guard.Instrument(wasm)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidModule, err)
	}
	e := &compiledEntry{key: key, refs: 1, inCache: true, done: make(chan struct{}), mark: h.markOf(guarded)}
	if h.opts.nativeFirst || h.marked(e.mark) {
		mod, err := compileModule(ctx, p.rt, guarded)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrInvalidModule, err)
		}
		e.native.Store(&mod)
		close(e.done)
		h.setMark(e.mark)
	} else {
		mod, err := compileModule(ctx, p.interp, guarded)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrInvalidModule, err)
		}
		e.interp = mod
		h.mu.Lock()
		if h.closed {
			close(e.done) // the host is going: no machine code
		} else {
			h.bg.Add(1)
			go h.compileNative(p, e, guarded)
		}
		h.mu.Unlock()
	}
	h.mu.Lock()
	h.compiled.Add(key, e)
	h.mu.Unlock()
	return e, nil
}

// backgroundNice is how much lower than the process the background
// compilations run (a nice value): they take the CPU the node's requests,
// guest calls and interpreter compilations leave.
const backgroundNice = 10

// compileNative compiles e's module to machine code in the background, one
// module at a time and at a lower priority, and moves the plugins that run
// it over.
func (h *Host) compileNative(p *project, e *compiledEntry, guarded []byte) {
	defer h.bg.Done()
	defer close(e.done)
	ctx := h.bgCtx
	if h.opts.beforeNative != nil {
		h.opts.beforeNative(ctx)
	}
	// wazero compiles a module on the calling goroutine (one worker by
	// default). Locked and never unlocked, the thread whose priority is
	// lowered ends with this goroutine.
	runtime.LockOSThread()
	lowerThreadPriority()
	h.nativeMu.Lock()
	defer h.nativeMu.Unlock()
	h.mu.Lock()
	gone := e.closed
	h.mu.Unlock()
	if gone || ctx.Err() != nil {
		return // evicted unused, or the host is closing
	}
	start := time.Now()
	mod, err := compileModule(ctx, p.rt, guarded)
	if err != nil {
		// Both tiers validate alike: this is wazero's compiler failing on
		// a module its interpreter runs. The module stays interpreted.
		h.log.Error("plugin module: compilation to machine code failed; it stays on the interpreter",
			"project", p.id, "err", err)
		return
	}
	h.mu.Lock()
	if e.closed {
		h.mu.Unlock()
		_ = mod.Close(ctx)
		return
	}
	e.native.Store(&mod)
	h.mu.Unlock()
	h.setMark(e.mark)
	h.log.Info("plugin module compiled to machine code", "project", p.id, "took", time.Since(start).Round(time.Millisecond))
	for _, pl := range p.list() {
		if pl.compiled == e && pl.pool != nil {
			pl.pool.upgrade()
		}
	}
}

// Precompile compiles a module for a project into the compiled-module cache
// without checking or starting it: a node that learns of an upload made on
// another node compiles it ahead of the registration that will name it.
func (h *Host) Precompile(ctx context.Context, project string, wasm []byte) error {
	p, err := h.projectOf(ctx, project)
	if err != nil {
		return err
	}
	e, err := h.compile(ctx, p, wasm)
	if err != nil {
		return err
	}
	h.release(e)
	return nil
}

// WaitCompiled waits until every module the host has compiled so far runs
// on machine code (or its compilation to machine code failed), or until ctx
// ends. A gateway starting up calls it before it reports ready, so that
// its first requests do not meet the interpreter; benchmarks, so that they
// measure machine code.
func (h *Host) WaitCompiled(ctx context.Context) error {
	h.mu.Lock()
	entries := h.compiled.Values()
	h.mu.Unlock()
	for _, e := range entries {
		select {
		case <-e.done:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// compileModule is rt.CompileModule that turns a panic into an error:
// wazero 1.12's validator panics on some malformed modules (a function
// whose type index is out of range, found by FuzzGuardCompiles), and a
// tenant's upload must not take the gateway down.
func compileModule(ctx context.Context, rt wazero.Runtime, wasm []byte) (mod wazero.CompiledModule, err error) {
	defer func() {
		if r := recover(); r != nil {
			mod, err = nil, fmt.Errorf("malformed module: %v", r)
		}
	}()
	return rt.CompileModule(ctx, wasm)
}

func (h *Host) release(e *compiledEntry) {
	h.mu.Lock()
	defer h.mu.Unlock()
	e.refs--
	if e.refs == 0 && !e.inCache {
		e.close()
	}
}

// markOf names the mark of a guarded module: its digest with the wazero
// version and the platform, which wazero's cache keys include too.
func (h *Host) markOf(guarded []byte) string {
	if h.marks == "" {
		return ""
	}
	d := sha256.New()
	d.Write(guarded)
	fmt.Fprintf(d, "\x00%s\x00%s/%s", wazeroVersion(), runtime.GOOS, runtime.GOARCH)
	return filepath.Join(h.marks, hex.EncodeToString(d.Sum(nil)))
}

func (h *Host) marked(mark string) bool {
	if mark == "" {
		return false
	}
	_, err := os.Stat(mark)
	return err == nil
}

// setMark records that wazero's cache holds the module's machine code. A
// mark that cannot be written costs the next process an interpreted start.
func (h *Host) setMark(mark string) {
	if mark == "" {
		return
	}
	err := os.MkdirAll(filepath.Dir(mark), 0o700)
	if err == nil {
		err = os.WriteFile(mark, nil, 0o600)
	}
	if err != nil {
		h.log.Warn("plugin module: marking it compiled", "err", err)
	}
}

// wazeroVersion is the version of wazero built in ("" when the binary
// carries no module information).
func wazeroVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, m := range bi.Deps {
			if m.Path == "github.com/tetratelabs/wazero" {
				return m.Version
			}
		}
	}
	return ""
}
