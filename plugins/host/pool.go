package host

import (
	"cmp"
	"context"
	crand "crypto/rand"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gatehouse-dev/gatehouse/plugins/guard"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"
	"github.com/tetratelabs/wazero/sys"
)

// pool keeps up to max instances of one plugin; each serves one call at a
// time. Idle instances stay warm between calls.
type pool struct {
	pl      *plugin
	proj    *project
	slots   chan struct{} // one token per live-or-creatable instance
	onEmpty func()

	mu     sync.Mutex
	idle   []*instance
	live   int
	closed bool
}

func newPool(pl *plugin, proj *project, max int, onEmpty func()) *pool {
	return &pool{pl: pl, proj: proj, slots: make(chan struct{}, max), onEmpty: onEmpty}
}

// get returns an idle instance or starts a new one, waiting for a free
// slot until deadline.
func (p *pool) get(ctx context.Context, deadline time.Time) (*instance, error) {
	select {
	case p.slots <- struct{}{}:
	default:
		t := time.NewTimer(time.Until(deadline))
		defer t.Stop()
		select {
		case p.slots <- struct{}{}:
		case <-t.C:
			return nil, ErrPoolBusy
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		<-p.slots
		return nil, ErrClosed
	}
	var stale []*instance // interpreted, while the machine code is ready
	defer func() {
		for _, inst := range stale {
			inst.close()
		}
	}()
	for n := len(p.idle); n > 0; n = len(p.idle) {
		inst := p.idle[n-1]
		p.idle = p.idle[:n-1]
		if p.stale(inst) {
			stale = append(stale, inst)
			p.live--
			continue
		}
		p.mu.Unlock()
		return inst, nil
	}
	p.live++
	p.mu.Unlock()
	// Starting an instance is the host's cost, not the guest's: it is
	// bounded by Options.MaxTimeout rather than by the call's deadline.
	inst, err := p.start(context.WithoutCancel(ctx))
	if err != nil {
		p.mu.Lock()
		p.live--
		empty := p.closed && p.live == 0
		p.mu.Unlock()
		<-p.slots
		if empty {
			p.onEmpty()
		}
		return nil, err
	}
	return inst, nil
}

// put returns an instance after a call; drop closes it instead (after a
// trap, a timeout, or when its memory grew too much).
func (p *pool) put(inst *instance, drop bool) {
	drop = drop || p.stale(inst)
	p.mu.Lock()
	if !drop && !p.closed {
		p.idle = append(p.idle, inst)
		p.mu.Unlock()
		<-p.slots
		return
	}
	p.live--
	empty := p.closed && p.live == 0
	refill := !p.closed && !p.warm()
	p.mu.Unlock()
	inst.close()
	<-p.slots
	if empty {
		p.onEmpty()
	}
	if refill {
		p.pl.h.bg.Go(p.refill)
	}
}

// refill starts one instance in the background after one was dropped, so
// the next call finds a warm instance instead of paying for a start.
func (p *pool) refill() {
	select {
	case p.slots <- struct{}{}:
	default:
		return // every slot is in use
	}
	p.mu.Lock()
	if p.closed || p.warm() {
		p.mu.Unlock()
		<-p.slots
		return
	}
	p.live++
	p.mu.Unlock()
	cpu := startCPU()
	inst, err := p.start(context.Background())
	used := cpu.stop()
	if inst != nil {
		used += inst.mem.takeGrown()
	}
	p.pl.h.sched.charge(&p.proj.share, used) // the project's guest time, not a slot's
	if err != nil {
		p.pl.h.log.Warn("plugin instance start failed", "project", p.pl.reg.Project, "plugin", p.pl.reg.Name, "err", err)
		p.mu.Lock()
		p.live--
		empty := p.closed && p.live == 0
		p.mu.Unlock()
		<-p.slots
		if empty {
			p.onEmpty()
		}
		return
	}
	p.put(inst, false)
}

// stale reports whether inst runs interpreted code while the machine code
// is ready: it serves no further call.
func (p *pool) stale(inst *instance) bool {
	return !inst.native && p.pl.compiled.native.Load() != nil
}

// warm reports whether an idle instance can take the next call. Called
// with p.mu held.
func (p *pool) warm() bool {
	for _, inst := range p.idle {
		if !p.stale(inst) {
			return true
		}
	}
	return false
}

// upgrade moves the pool to its module's machine code, now ready: one
// instance on it is started first, so the next call finds it warm, then the
// idle interpreted instances close. Busy ones close when their call ends.
func (p *pool) upgrade() {
	p.refill()
	p.mu.Lock()
	var stale []*instance
	keep := p.idle[:0]
	for _, inst := range p.idle {
		if p.stale(inst) {
			stale = append(stale, inst)
		} else {
			keep = append(keep, inst)
		}
	}
	clear(p.idle[len(keep):])
	p.idle = keep
	p.live -= len(stale)
	p.mu.Unlock()
	for _, inst := range stale {
		inst.close()
	}
}

// close retires the pool: idle instances close now, busy ones when their
// call ends; onEmpty runs once the last one is gone.
func (p *pool) close() {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return
	}
	p.closed = true
	idle := p.idle
	p.idle = nil
	p.live -= len(idle)
	empty := p.live == 0
	p.mu.Unlock()
	for _, inst := range idle {
		inst.close()
	}
	if empty {
		p.onEmpty()
	}
}

// instance is one instantiated module with its per-call clock.
type instance struct {
	mod     api.Module
	fns     [numHooks]api.Function
	marker  api.Function
	mem     *cappedMemory
	native  bool              // runs machine code, not the interpreter's (compile.go)
	stop    api.MutableGlobal // the guard's stop flag (package guard)
	stopped bool              // the flag was raised: the instance must be dropped
	// running counts the guest calls under way in the whole host.
	running *atomic.Int64
	// startBytes is the memory size once started: an instance that grew
	// well past it is not kept warm while its project is short of memory.
	startBytes uint64
	stack      []uint64
	cs         callState

	wall int64 // unix nanoseconds the guest sees as "now" during a call
	mono int64 // the guest's monotonic clock
}

func (p *pool) start(ctx context.Context) (*instance, error) {
	pl := p.pl
	opts := pl.h.opts
	inst := &instance{stack: make([]uint64, 1), running: &pl.h.running}
	inst.setClock(opts.Now())
	inst.mem = &cappedMemory{max: pl.memCap, budget: pl.h.mem, proj: p.proj}
	var rnd io.Reader
	if opts.Rand != nil {
		rnd = opts.Rand()
	} else {
		var seed [32]byte
		_, _ = crand.Read(seed[:])
		rnd = mrand.NewChaCha8(seed)
	}
	out := pl.logs.Writer("stdout")
	errw := pl.logs.Writer("stderr")
	cfg := wazero.NewModuleConfig().
		WithName("").
		WithStartFunctions(). // _initialize runs below, with the guard armed
		WithStdout(out).
		WithStderr(errw).
		WithWalltime(func() (int64, int32) {
			return inst.wall / 1e9, int32(inst.wall % 1e9)
		}, sys.ClockResolution(1)).
		WithNanotime(func() int64 {
			inst.mono += 1000 // the guest's clock moves 1 µs per reading
			return inst.mono
		}, sys.ClockResolution(1)).
		WithRandSource(rnd)

	ctx, cancel := context.WithTimeout(ctx, opts.MaxTimeout)
	defer cancel()
	ctx = experimental.WithMemoryAllocator(ctx, inst.mem)
	ctx = context.WithValue(ctx, callKey{}, &callState{pl: pl})
	code, native := pl.compiled.code()
	rt := p.proj.interp
	if native {
		rt = p.proj.rt
	}
	inst.native = native
	mod, err := rt.InstantiateModule(ctx, code, cfg)
	if err != nil {
		inst.mem.Free()
		if inst.mem.hit {
			return nil, fmt.Errorf("%w: %w", ErrMemoryLimit, err)
		}
		return nil, err
	}
	inst.mod = mod
	if inst.mem.hit { // its first allocation was over the project's memory share
		inst.close()
		return nil, fmt.Errorf("%w: the project's share of the memory budget is used up", ErrMemoryLimit)
	}
	stop, ok := mod.ExportedGlobal(guard.StopExport).(api.MutableGlobal)
	if !ok {
		inst.close()
		return nil, fmt.Errorf("%w: no guard", ErrInvalidModule)
	}
	inst.stop = stop
	// The module's start section (moved to an export by the guard), then
	// _initialize, as instantiation would have run them, but stoppable.
	for _, name := range []string{guard.StartExport, "_initialize"} {
		fn := mod.ExportedFunction(name)
		if fn == nil {
			continue
		}
		if err := inst.run(ctx, fn, nil); err != nil || inst.stopped {
			inst.close()
			if inst.mem.hit {
				return nil, fmt.Errorf("%w: %w", ErrMemoryLimit, err)
			}
			return nil, fmt.Errorf("%s: %w", name, cmp.Or(err, context.DeadlineExceeded))
		}
	}
	inst.startBytes = inst.memoryBytes()
	inst.marker = mod.ExportedFunction(abiMarker)
	for id, on := range pl.hooks {
		if on {
			inst.fns[id] = mod.ExportedFunction(hookExports[id])
		}
	}
	return inst, nil
}

func (inst *instance) setClock(now time.Time) {
	inst.wall = now.UnixNano()
	if inst.mono == 0 {
		inst.mono = 1
	}
}

func (inst *instance) abiMinor(ctx context.Context) (uint32, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	inst.stack = inst.stack[:1]
	if err := inst.run(ctx, inst.marker, inst.stack); err != nil {
		return 0, err
	}
	return uint32(inst.stack[0]), nil
}

// run calls fn with the guard armed: when ctx ends (its deadline, or the
// caller giving up) the guest's stop flag is raised and the guest traps at
// its next fuel check. An instance whose flag was raised is marked stopped
// and must not serve another call. An interpreted instance is stopped by
// its runtime instead.
func (inst *instance) run(ctx context.Context, fn api.Function, stack []uint64) error {
	inst.running.Add(1)
	defer inst.running.Add(-1)
	if !inst.native {
		// The interpreter's runtime closes the module when ctx ends
		// (WithCloseOnContextDone: an atomic check at every loop header, cheap
		// beside interpreting), rather than the guard reading a flag another
		// goroutine writes, which interpreted Go code would race on.
		err := fn.CallWithStack(ctx, stack)
		if ctx.Err() != nil {
			inst.stopped = true
		}
		return err
	}
	disarm := context.AfterFunc(ctx, func() { inst.stop.Set(1) })
	err := fn.CallWithStack(ctx, stack)
	if !disarm() {
		inst.stopped = true
	}
	return err
}

func (inst *instance) close() {
	if inst.mod != nil {
		_ = inst.mod.Close(context.Background())
	}
	inst.mem.Free() // wazero frees it on Close; this covers a half-started instance
}

// memoryBytes is the guest's current linear memory size.
func (inst *instance) memoryBytes() uint64 {
	if m := inst.mod.Memory(); m != nil {
		return uint64(m.Size())
	}
	return 0
}
