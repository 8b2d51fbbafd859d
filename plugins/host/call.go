package host

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// call runs one hook of one plugin: a slot of the scheduler, breaker,
// pooled instance, deadline, metrics. decode reads the guest's output
// before the instance goes back to the pool (the output buffer belongs to
// the instance).
func (pl *plugin) call(ctx context.Context, hook hookID, input []byte, decode func(out []byte) error) error {
	m := pl.met[hook]
	m.calls.Inc()
	pl.stats.calls.Add(1)
	now := time.Now()
	if pl.refused != nil {
		return pl.failed(m, KindRefused, fmt.Errorf("%w: %w", ErrRefused, pl.refused), now)
	}
	// Waiting for a slot is bounded by the plugin's timeout; the guest's
	// own time starts once it has one.
	sched, sh := pl.h.sched, &pl.pool.proj.share
	slice, err := sched.acquire(ctx, sh, now.Add(pl.timeout))
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return pl.failed(m, KindBusy, err, now)
	}
	began := time.Now()
	cpu := startCPU()
	var grown time.Duration // the cost of the instance's memory growth (growthCost)
	defer func() { sched.release(sh, cpu.stop()+grown) }()
	if !pl.breaker.allow(began) {
		m.errors.WithLabelValues(KindCircuitOpen).Inc()
		pl.stats.failed(KindCircuitOpen, ErrCircuitOpen)
		return fmt.Errorf("%w: %s: %w", ErrPluginFailed, pl.reg.Name, ErrCircuitOpen)
	}
	// A call may not outrun its project's CPU budget, unless it may fetch:
	// then its time is mostly the network's, and only its CPU is charged.
	timeout := pl.timeout
	if pl.compiled.native.Load() == nil {
		// The interpreter runs guest code 25-45 times slower than machine
		// code (compile.go): for the seconds until the machine code is
		// ready, a call may take longer, within the server's ceiling. The
		// CPU budget still bounds what the project's calls use.
		timeout = min(timeout*interpretedSlack, pl.h.opts.MaxTimeout)
	}
	if !pl.canFetch {
		timeout = min(timeout, slice)
	}
	deadline := began.Add(timeout)
	callCtx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()

	inst, err := pl.pool.get(callCtx, deadline)
	if err != nil {
		kind := KindStart
		switch {
		case ctx.Err() != nil:
			return ctx.Err()
		case errors.Is(err, ErrPoolBusy) || errors.Is(err, context.DeadlineExceeded):
			kind, err = KindPoolBusy, ErrPoolBusy
		case errors.Is(err, ErrMemoryLimit):
			kind = KindMemory
		}
		return pl.failed(m, kind, err, now)
	}

	cs := &inst.cs
	*cs = callState{pl: pl, input: input, output: cs.output[:0], outputLimit: max(1<<20, 2*len(input))}
	inst.setClock(pl.h.opts.Now())
	inst.stack = inst.stack[:1]
	err = inst.run(context.WithValue(callCtx, callKey{}, cs), inst.fns[hook], inst.stack)

	grown = inst.mem.takeGrown()
	drop := err != nil || inst.stopped
	var kind string
	switch {
	case err == nil:
		switch code := uint32(inst.stack[0]); {
		case cs.overflow:
			kind, err = KindOutput, fmt.Errorf("%w: output larger than %d bytes", ErrBadOutput, cs.outputLimit)
		case code == hookError:
			kind, err = KindGuestError, fmt.Errorf("%w: %s", ErrGuestError, guestMessage(cs.output))
		case code != hookOK:
			kind, err = KindOutput, fmt.Errorf("%w: hook returned %d", ErrBadOutput, code)
		default:
			if derr := decode(cs.output); derr != nil {
				kind, err = KindOutput, fmt.Errorf("%w: %w", ErrBadOutput, derr)
			}
		}
	case inst.mem.hit:
		kind, err = KindMemory, fmt.Errorf("%w: %w", ErrMemoryLimit, err)
	case ctx.Err() != nil:
		// The caller gave up; not the plugin's fault.
		pl.pool.put(inst, drop)
		cs.reset()
		return ctx.Err()
	case callCtx.Err() != nil:
		kind, err = KindTimeout, fmt.Errorf("%w after %v", ErrTimeout, timeout)
		if timeout < pl.timeout {
			err = fmt.Errorf("%w (what was left of the project's CPU budget)", err)
		}
		m.timeouts.Inc()
	default:
		kind, err = KindTrap, fmt.Errorf("%w: %w", ErrTrap, err)
	}
	if !drop && (inst.memoryBytes() > pl.memCap/4*3 ||
		inst.memoryBytes() > 2*inst.startBytes && pl.h.mem.overShare(pl.pool.proj)) {
		drop = true // a Go heap never shrinks: start afresh
		pl.h.log.Debug("plugin instance dropped for memory", "project", pl.reg.Project, "plugin", pl.reg.Name,
			"bytes", inst.memoryBytes())
	}
	cs.reset()
	pl.pool.put(inst, drop)
	if err != nil {
		return pl.failed(m, kind, err, now)
	}
	pl.breaker.success()
	m.latency.Observe(time.Since(now).Seconds())
	return nil
}

func (cs *callState) reset() {
	cs.input, cs.fetchBody = nil, nil
	if cap(cs.output) > 64<<10 {
		cs.output = nil
	}
}

func (pl *plugin) failed(m *hookMetrics, kind string, err error, start time.Time) error {
	m.errors.WithLabelValues(kind).Inc()
	m.latency.Observe(time.Since(start).Seconds())
	pl.stats.failed(kind, err)
	if kind == KindRefused || kind == KindBusy {
		// Not the module's fault this call: no breaker, and no log line per
		// call (a project over budget is refused thousands of times a second).
		return fmt.Errorf("%w: %s: %w", ErrPluginFailed, pl.reg.Name, err)
	}
	if pl.breaker.failure(time.Now()) {
		pl.h.log.Warn("plugin circuit breaker opened", "project", pl.reg.Project, "plugin", pl.reg.Name,
			"cooldown", pl.breaker.cooldown)
	}
	pl.h.log.Warn("plugin call failed", "project", pl.reg.Project, "plugin", pl.reg.Name, "kind", kind, "err", err)
	pl.logs.Add("host: call failed (" + kind + "): " + err.Error())
	return fmt.Errorf("%w: %s: %w", ErrPluginFailed, pl.reg.Name, err)
}

func guestMessage(out []byte) string {
	const max = 300
	if len(out) > max {
		return string(out[:max]) + "…"
	}
	if len(out) == 0 {
		return "(no message)"
	}
	return string(out)
}

// breaker opens after threshold consecutive failures and stays open for
// cooldown; then one trial call is let through (half-open), whose outcome
// closes or reopens it.
type breaker struct {
	threshold int
	cooldown  time.Duration

	mu        sync.Mutex
	failures  int
	openUntil time.Time
	trial     bool
}

func (b *breaker) allow(now time.Time) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.failures < b.threshold {
		return true
	}
	if now.Before(b.openUntil) || b.trial {
		return false
	}
	b.trial = true
	return true
}

// isOpen reports whether calls now fail at once.
func (b *breaker) isOpen(now time.Time) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.failures >= b.threshold && now.Before(b.openUntil)
}

func (b *breaker) success() {
	b.mu.Lock()
	b.failures, b.trial = 0, false
	b.mu.Unlock()
}

// failure records a failed call and reports whether it opened the breaker.
func (b *breaker) failure(now time.Time) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.failures++
	b.trial = false
	if b.failures >= b.threshold {
		b.openUntil = now.Add(b.cooldown)
		return true
	}
	return false
}
