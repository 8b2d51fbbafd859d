package host

import (
	"context"
	"crypto/sha256"
	"fmt"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/gatehouse-dev/gatehouse/plugins/guard"
	"github.com/tetratelabs/wazero"
)

// Compilation in two tiers. wazero's optimizing compiler takes seconds for
// a module built by Go (2.4 MB: 2.3-3.6 s on the loaded test machine), its
// interpreter a tenth of that. Register, Check and CheckModule compile to
// machine code before they answer (an upload is known good, on machine
// code, before it is stored). Precompile, which a node calls when it hears
// of an upload made on another node, compiles for the interpreter only and
// leaves the optimizing compiler to work in the background: a registration
// naming the module then runs interpreted at once, and once the machine
// code is ready every plugin of the module starts an instance on it and
// closes its interpreted ones (calls in flight finish where they are).
//
// Both tiers run the same guarded bytes in runtimes set up alike, so the
// scheduler's slots and CPU budget, cappedMemory and the deadlines hold on
// either; only the speed differs, and how a call is stopped (instance.run).

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
	// interp is the interpreter's code, nil when the machine code was
	// ready at once; native is the machine code, once compiled.
	interp wazero.CompiledModule
	native atomic.Pointer[wazero.CompiledModule]
	// done is closed when the module has its final code: at once, or when
	// the background compilation ended (compiled or failed) and the plugins
	// moved over (what tests and benchmarks await).
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
// is compiled to machine code, or, when tiered, for the interpreter with
// its machine code on the way (compileNative).
func (h *Host) compile(ctx context.Context, p *project, wasm []byte, tiered bool) (*compiledEntry, error) {
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
	e := &compiledEntry{refs: 1, inCache: true, done: make(chan struct{})}
	rt := p.rt
	if tiered {
		rt = p.interp
	}
	mod, err := compileModule(ctx, rt, guarded)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidModule, err)
	}
	if tiered {
		e.interp = mod
		go h.compileNative(p, e, guarded)
	} else {
		e.native.Store(&mod)
		close(e.done)
	}
	h.mu.Lock()
	h.compiled.Add(key, e)
	h.mu.Unlock()
	return e, nil
}

// interpretedSlack multiplies a plugin's timeout for a call on the
// interpreter (call.go).
const interpretedSlack = 20

// backgroundNice is how much lower than the process the background
// compilations run (a nice value): they take the CPU the node's requests,
// guest calls and interpreter compilations leave.
const backgroundNice = 10

// compileNative compiles e's module to machine code in the background, one
// module at a time and at a lower priority, and moves the plugins that run
// it over. It may outlive Host.Close, which leaves the runtime it compiles
// in, and the cache, for it to close.
func (h *Host) compileNative(p *project, e *compiledEntry, guarded []byte) {
	finished := true // e.done closes on return, or once the plugins moved over
	defer func() {
		if finished {
			close(e.done)
		}
	}()
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
	if e.closed || h.closed || ctx.Err() != nil {
		h.mu.Unlock()
		return // evicted unused, or the host is closing
	}
	h.compiling = p
	h.mu.Unlock()

	start := time.Now()
	mod, err := compileModule(ctx, p.rt, guarded)
	h.mu.Lock()
	h.compiling = nil
	closeAll := h.leftToCompiler
	keep := err == nil && !e.closed && !closeAll
	if keep {
		e.native.Store(&mod)
	}
	h.mu.Unlock()
	switch {
	case closeAll:
		if mod != nil {
			_ = mod.Close(ctx)
		}
		_ = p.rt.Close(ctx)
		if h.cache != nil {
			_ = h.cache.Close(ctx)
		}
		return
	case err != nil:
		// Both tiers validate alike: this is wazero's compiler failing on
		// a module its interpreter runs. The module stays interpreted.
		h.log.Error("plugin module: compilation to machine code failed; it stays on the interpreter",
			"project", p.id, "err", err)
		return
	case !keep: // evicted unused meanwhile
		_ = mod.Close(ctx)
		return
	}
	h.log.Info("plugin module compiled to machine code", "project", p.id, "took", time.Since(start).Round(time.Millisecond))
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return
	}
	finished = false
	h.bg.Go(func() { // at the process's priority, and waited for by Close
		defer close(e.done)
		for _, pl := range p.list() {
			if pl.compiled == e && pl.pool != nil {
				pl.pool.upgrade()
			}
		}
	})
}

// Precompile compiles a module for a project into the compiled-module cache
// without checking or starting it, for wazero's interpreter at once and to
// machine code in the background: a node that hears of an upload made (and
// checked) on another node compiles it ahead of the registration that will
// name it, which then runs it interpreted until its machine code is ready.
// A module already compiled is left as it is.
func (h *Host) Precompile(ctx context.Context, project string, wasm []byte) error {
	p, err := h.projectOf(ctx, project)
	if err != nil {
		return err
	}
	e, err := h.compile(ctx, p, wasm, true)
	if err != nil {
		return err
	}
	h.release(e)
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
