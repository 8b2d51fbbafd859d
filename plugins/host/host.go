package host

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
)

// Host runs the plugins of every project. It is safe for concurrent use.
type Host struct {
	opts    Options
	log     *slog.Logger
	metrics *metrics
	cache   wazero.CompilationCache
	client  *http.Client // http_fetch's, from Options.Egress (nil: every fetch denied)
	sched   *scheduler
	mem     *memBudget

	compileMu sync.Mutex // one compilation a caller waits for at a time, as wazero recommends
	nativeMu  sync.Mutex // one background compilation to machine code at a time
	bgCtx     context.Context
	bgStop    context.CancelFunc
	bg        sync.WaitGroup // background instance starts (pool refills)
	running   atomic.Int64   // guest calls under way: Close waits for them before freeing memory

	mu     sync.Mutex
	closed bool
	// compiling is the project whose runtime a background compilation to
	// machine code uses (nil: none); leftToCompiler tells that compilation
	// that Close left that runtime and the cache for it to close.
	compiling      *project
	leftToCompiler bool
	projects       map[string]*project
	compiled       *lru.Cache[compiledKey, *compiledEntry]
}

// project is one tenant project: its own wazero runtimes and its plugins.
type project struct {
	id string
	rt wazero.Runtime // the optimizing compiler's: machine code
	// interp is the interpreter's runtime, which serves a module new to the
	// host until rt has compiled it (compile.go).
	interp  wazero.Runtime
	plugins atomic.Pointer[[]*plugin] // registration order, copy-on-write
	share   share                     // its part of the scheduler (guarded by scheduler.mu)
	memUsed uint64                    // guest memory its instances hold (guarded by memBudget.mu)
}

// New creates a Host; it starts nothing (modules compile as they are registered). Close it to
// release runtimes and the cache.
func New(opts Options) (*Host, error) {
	opts = opts.withDefaults()
	h := &Host{opts: opts, log: opts.Log, projects: map[string]*project{},
		sched: newScheduler(opts), mem: &memBudget{total: uint64(opts.MemoryBudgetMB) << 20}}
	m, err := newMetrics(opts.Registerer)
	if err != nil {
		return nil, err
	}
	h.metrics = m
	if opts.CacheDir != "" {
		if err := os.MkdirAll(opts.CacheDir, 0o700); err != nil {
			m.unregister(opts.Registerer)
			return nil, fmt.Errorf("host: cache dir: %w", err)
		}
		h.cache, err = wazero.NewCompilationCacheWithDir(opts.CacheDir)
		if err != nil {
			m.unregister(opts.Registerer)
			return nil, fmt.Errorf("host: compilation cache: %w", err)
		}
	} else {
		h.cache = wazero.NewCompilationCache()
	}
	h.compiled, _ = lru.NewWithEvict(opts.CompiledCacheSize, func(_ compiledKey, e *compiledEntry) {
		// Called with h.mu held (every LRU mutation happens under it).
		e.inCache = false
		if e.refs == 0 {
			e.close()
		}
	})
	if opts.Egress != nil {
		h.client = opts.Egress.Client()
	}
	h.bgCtx, h.bgStop = context.WithCancel(context.Background())
	return h, nil
}

// Close stops every plugin and releases the runtimes and the compilation
// cache. Calls in flight fail; Close may be called more than once.
func (h *Host) Close() error {
	ctx := context.Background()
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return nil
	}
	h.closed = true
	projects := h.projects
	h.projects = map[string]*project{}
	h.mu.Unlock()

	var errs []error
	for _, p := range projects {
		for _, pl := range p.list() {
			pl.retire()
		}
	}
	h.bgStop()  // background compilations not begun yet are skipped
	h.bg.Wait() // no instance may be starting while its runtime closes
	// Guest memory is unmapped when a runtime closes: wait for the calls
	// under way, which their deadlines end (the pools are closed, so no
	// call starts now).
	for deadline := time.Now().Add(h.opts.MaxTimeout + time.Second); h.running.Load() > 0 && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	// A compilation to machine code under way cannot be stopped and may
	// take seconds: rather than hold the shutdown up, its runtime and the
	// cache are left for it to close when it returns (compileNative).
	h.mu.Lock()
	busy := h.compiling
	h.leftToCompiler = busy != nil
	h.mu.Unlock()
	for _, p := range projects {
		for _, rt := range []wazero.Runtime{p.rt, p.interp} {
			if rt == busy.runtime() {
				continue
			}
			if err := rt.Close(ctx); err != nil {
				errs = append(errs, err)
			}
		}
	}
	h.mu.Lock()
	h.compiled.Purge()
	h.mu.Unlock()
	if h.cache != nil && busy == nil {
		if err := h.cache.Close(ctx); err != nil {
			errs = append(errs, err)
		}
	}
	if h.client != nil {
		h.client.CloseIdleConnections()
	}
	h.metrics.unregister(h.opts.Registerer)
	return errors.Join(errs...)
}

// runtime is the project's machine-code runtime, nil for no project.
func (p *project) runtime() wazero.Runtime {
	if p == nil {
		return nil
	}
	return p.rt
}

func (p *project) list() []*plugin {
	if l := p.plugins.Load(); l != nil {
		return *l
	}
	return nil
}

// projectFor returns the project's runtime, creating it on first use.
// Called with h.mu held.
func (h *Host) projectFor(ctx context.Context, id string) (*project, error) {
	if p, ok := h.projects[id]; ok {
		return p, nil
	}
	// Runaway calls are stopped by the guard compiled into every module
	// (package guard), not by WithCloseOnContextDone, whose check costs an
	// exit to Go at every loop iteration. Memory limits are cappedMemory's
	// (the plugin's limit, the memory budget): wazero's own limit is left
	// at its 4 GiB maximum so that every refused grow goes through it and
	// is counted as memory, the server's ceiling included.
	rt, err := h.newRuntime(ctx, wazero.NewRuntimeConfig().WithCompilationCache(h.cache))
	if err != nil {
		return nil, err
	}
	// The interpreter checks for a closed module at every loop header: it
	// is stopped that way (instance.run), its fuel checks notwithstanding.
	interp, err := h.newRuntime(ctx, wazero.NewRuntimeConfigInterpreter().WithCloseOnContextDone(true))
	if err != nil {
		_ = rt.Close(ctx)
		return nil, err
	}
	p := &project{id: id, rt: rt, interp: interp}
	h.projects[id] = p
	h.mem.setProjects(len(h.projects))
	return p, nil
}

// newRuntime creates a runtime with the host modules a plugin may import.
func (h *Host) newRuntime(ctx context.Context, cfg wazero.RuntimeConfig) (wazero.Runtime, error) {
	rt := wazero.NewRuntimeWithConfig(ctx, cfg)
	if _, err := wasi_snapshot_preview1.Instantiate(ctx, rt); err != nil {
		_ = rt.Close(ctx)
		return nil, fmt.Errorf("host: wasi: %w", err)
	}
	if err := h.instantiateABI(ctx, rt); err != nil {
		_ = rt.Close(ctx)
		return nil, fmt.Errorf("host: %s module: %w", abiModule, err)
	}
	return rt, nil
}

// Register compiles (or reuses) the module, checks its ABI marker, hook
// exports and imports, starts one warm instance, and then swaps it in for
// any plugin of the same project and name: calls that start afterwards use
// the new module, calls in flight finish on the old one.
func (h *Host) Register(ctx context.Context, r Registration) error {
	pl, err := h.prepare(ctx, r, false)
	if err != nil {
		return err
	}
	replaced, err := h.swapIn(pl.withMetrics())
	if err != nil {
		return err
	}
	h.log.Info("plugin registered", "project", r.Project, "plugin", r.Name, "hooks", r.Hooks,
		"replaced", replaced, "abiMinor", pl.abiMinor)
	return nil
}

// Check reports whether Register would accept r (nil) or why it would
// refuse it, without registering anything: the module is compiled (and
// kept in the compiled-module cache), checked, and one instance is started
// and closed.
func (h *Host) Check(ctx context.Context, r Registration) error {
	pl, err := h.prepare(ctx, r, false)
	if err != nil {
		return err
	}
	pl.retire()
	return nil
}

// CheckModule reports why the host would refuse a module no registration
// names yet (an upload): it must compile, carry the ABI marker, import
// only what the host provides and start within the server's memory
// ceiling. Hooks and allowHosts are checked when a registration names it.
func (h *Host) CheckModule(ctx context.Context, project string, wasm []byte) error {
	r := Registration{Project: project, Name: "module", Module: wasm, Hooks: []string{HookFormsSubmit},
		Limits: Limits{MemoryMB: h.opts.MaxMemoryMB}}
	pl, err := h.prepare(ctx, r, true)
	if err != nil {
		return err
	}
	pl.retire()
	return nil
}

// prepare normalizes r, compiles its module and starts its first instance.
// A module-only check (Host.CheckModule) serves no hooks.
func (h *Host) prepare(ctx context.Context, r Registration, moduleOnly bool) (*plugin, error) {
	r, err := r.normalize(h.opts)
	if err != nil {
		return nil, err
	}
	p, err := h.projectOf(ctx, r.Project)
	if err != nil {
		return nil, err
	}
	ce, err := h.compile(ctx, p, r.Module, false)
	if err != nil {
		return nil, err
	}
	if moduleOnly {
		r.Hooks = nil
	}
	pl, err := h.newPlugin(ctx, p, r, ce, moduleOnly)
	if err != nil {
		h.release(ce)
		return nil, err
	}
	return pl, nil
}

// projectOf returns the project's runtime, creating it on first use.
func (h *Host) projectOf(ctx context.Context, id string) (*project, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil, ErrClosed
	}
	return h.projectFor(ctx, id)
}

// Refuse records that the project's plugin r.Name cannot run, and why (its
// module is missing, or Register refused it). It replaces any registration
// of that name: every call of the hooks r names then fails with ErrRefused
// and r's failure policy applies (fail-closed fails the request), and
// Status shows the plugin as refused with the reason.
func (h *Host) Refuse(ctx context.Context, r Registration, reason error) error {
	if r.Project == "" || r.Name == "" {
		return fmt.Errorf("%w: refuse needs a project and a name", ErrInvalidRegistration)
	}
	if _, err := h.projectOf(ctx, r.Project); err != nil {
		return err
	}
	pl := &plugin{h: h, reg: r, refused: reason, logs: newLogBuffer(h.opts.LogBufferBytes)}
	var hooks []string
	for _, hk := range r.Hooks {
		if id, ok := parseHook(hk); ok && !pl.hooks[id] {
			pl.hooks[id] = true
			hooks = append(hooks, hk)
		}
	}
	pl.reg.Hooks, pl.reg.Module = hooks, nil
	switch r.OnError {
	case OnErrorOpen:
		pl.open = true
	case "":
		pl.open = !pl.hooks[hookCaptchaVerify]
	}
	pl.logs.Add("host: plugin refused: " + reason.Error())
	if _, err := h.swapIn(pl.withMetrics()); err != nil {
		return err
	}
	h.log.Warn("plugin refused", "project", r.Project, "plugin", r.Name, "err", reason)
	return nil
}

// swapIn puts pl in its project's list in place of the plugin of the same
// name (kept in its position) or at the end, and retires the one replaced.
func (h *Host) swapIn(pl *plugin) (replaced bool, err error) {
	h.mu.Lock()
	p, ok := h.projects[pl.reg.Project]
	if h.closed || !ok {
		h.mu.Unlock()
		pl.retire()
		return false, ErrClosed
	}
	old := p.list()
	next := make([]*plugin, 0, len(old)+1)
	var prev *plugin
	for _, o := range old {
		if o.reg.Name == pl.reg.Name {
			prev = o
			next = append(next, pl)
		} else {
			next = append(next, o)
		}
	}
	if prev == nil {
		next = append(next, pl)
	}
	p.plugins.Store(&next)
	h.mu.Unlock()
	if prev != nil {
		prev.retire()
	}
	return prev != nil, nil
}

// Unregister removes a plugin; calls in flight finish. Unknown names are
// ignored.
func (h *Host) Unregister(project, name string) {
	h.mu.Lock()
	p, ok := h.projects[project]
	if !ok {
		h.mu.Unlock()
		return
	}
	old := p.list()
	next := make([]*plugin, 0, len(old))
	var removed *plugin
	for _, o := range old {
		if o.reg.Name == name {
			removed = o
			continue
		}
		next = append(next, o)
	}
	p.plugins.Store(&next)
	h.mu.Unlock()
	if removed != nil {
		removed.retire()
		h.metrics.forget(project, name)
		h.log.Info("plugin unregistered", "project", project, "plugin", name)
	}
}

// Plugins lists the names of a project's plugins in call order.
func (h *Host) Plugins(project string) []string {
	h.mu.Lock()
	p, ok := h.projects[project]
	h.mu.Unlock()
	if !ok {
		return nil
	}
	var names []string
	for _, pl := range p.list() {
		names = append(names, pl.reg.Name)
	}
	return names
}

// Logs returns the lines in a plugin's log buffer (its stdout, stderr and
// log calls, oldest first, bounded by Options.LogBufferBytes).
func (h *Host) Logs(project, name string) []string {
	pl := h.find(project, name)
	if pl == nil {
		return nil
	}
	return pl.logs.Lines()
}

func (h *Host) find(project, name string) *plugin {
	h.mu.Lock()
	p, ok := h.projects[project]
	h.mu.Unlock()
	if !ok {
		return nil
	}
	for _, pl := range p.list() {
		if pl.reg.Name == name {
			return pl
		}
	}
	return nil
}

// withHook returns the project's plugins that serve hook, in order.
func (h *Host) withHook(project string, hook hookID) []*plugin {
	h.mu.Lock()
	p, ok := h.projects[project]
	h.mu.Unlock()
	if !ok {
		return nil
	}
	var out []*plugin
	for _, pl := range p.list() {
		if pl.hooks[hook] {
			out = append(out, pl)
		}
	}
	return out
}
