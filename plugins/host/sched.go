package host

import (
	"context"
	"runtime"
	"sync"
	"time"
)

// scheduler shares guest execution between projects (decisions.md 8.5). At
// most slots guest calls run at once, all projects together (one per core);
// one project holds at most perProject of them (all but one, so another
// project always finds a slot free of it); waiting projects are served in
// turn, one call each, so a project's long calls delay its own calls but
// not another's. Each project also has a CPU budget: the CPU time its calls
// and instance starts used (cpuMeter) is taken from a bucket refilled at
// budget per second. A project whose bucket is empty, or with queue calls
// already waiting, is refused at once (ErrBusy) instead of queueing.
type scheduler struct {
	slots      int
	perProject int
	budget     time.Duration // guest time per project per second
	burst      time.Duration // what the bucket holds when full
	queue      int

	mu    sync.Mutex
	free  int
	ready []*share // projects with waiting calls, in turn order
}

// share is one project's part of the scheduler; guarded by scheduler.mu.
type share struct {
	running int
	waiting []*waiter
	inReady bool
	tokens  time.Duration // guest time left; negative after an expensive call
	last    time.Time     // when tokens were last refilled
}

type waiter struct {
	ch      chan struct{}
	granted bool
}

func newScheduler(o Options) *scheduler {
	return &scheduler{slots: o.Slots, perProject: max(1, o.Slots-1), budget: o.CPUBudget,
		burst: o.CPUBudget, queue: o.QueueLength, free: o.Slots}
}

func (s *scheduler) refill(sh *share, now time.Time) {
	if sh.last.IsZero() {
		sh.tokens, sh.last = s.burst, now
		return
	}
	if d := now.Sub(sh.last); d > 0 {
		sh.tokens = min(s.burst, sh.tokens+time.Duration(float64(d)*float64(s.budget)/float64(time.Second)))
		sh.last = now
	}
}

// minSlice is the least time a call is given when its project's budget is
// nearly spent: short calls of a busy project still run to the end.
const minSlice = 10 * time.Millisecond

// acquire takes a slot for one guest call of the project, waiting in turn
// until deadline at most. ErrBusy when the project is over its CPU budget,
// its queue is full or no slot came in time. It returns how long the call
// may run: what is left of the project's budget (at least minSlice), so
// that one call cannot take more than a budget's worth of a core at once.
func (s *scheduler) acquire(ctx context.Context, sh *share, deadline time.Time) (time.Duration, error) {
	s.mu.Lock()
	s.refill(sh, time.Now())
	switch {
	case sh.tokens <= 0:
		s.mu.Unlock()
		return 0, ErrBusy
	case s.free > 0 && sh.running < s.perProject && len(sh.waiting) == 0:
		s.free--
		sh.running++
		left := sh.tokens
		s.mu.Unlock()
		return max(left, minSlice), nil
	case len(sh.waiting) >= s.queue:
		s.mu.Unlock()
		return 0, ErrBusy
	}
	w := &waiter{ch: make(chan struct{})}
	sh.waiting = append(sh.waiting, w)
	if !sh.inReady {
		sh.inReady = true
		s.ready = append(s.ready, sh)
	}
	s.mu.Unlock()

	t := time.NewTimer(time.Until(deadline))
	defer t.Stop()
	var err error
	select {
	case <-w.ch:
		s.mu.Lock()
		left := sh.tokens
		s.mu.Unlock()
		return max(left, minSlice), nil
	case <-t.C:
		err = ErrBusy
	case <-ctx.Done():
		err = ctx.Err()
	}
	s.mu.Lock()
	if w.granted { // granted while giving up: hand the slot on
		s.mu.Unlock()
		s.release(sh, 0)
		return 0, err
	}
	for i, o := range sh.waiting {
		if o == w {
			sh.waiting = append(sh.waiting[:i], sh.waiting[i+1:]...)
			break
		}
	}
	s.mu.Unlock()
	return 0, err
}

// release gives back a slot and charges the guest time used to the project.
func (s *scheduler) release(sh *share, used time.Duration) {
	s.mu.Lock()
	sh.tokens -= used
	sh.running--
	s.free++
	if sh.inReady { // its turn is over: the other waiting projects go first
		for i, o := range s.ready {
			if o == sh {
				s.ready = append(append(s.ready[:i], s.ready[i+1:]...), sh)
				break
			}
		}
	}
	s.dispatch()
	s.mu.Unlock()
}

// charge takes guest time used outside a slot (a background instance start)
// from the project's budget.
func (s *scheduler) charge(sh *share, used time.Duration) {
	s.mu.Lock()
	s.refill(sh, time.Now())
	sh.tokens -= used
	s.mu.Unlock()
}

// dispatch hands free slots to waiting projects, one call per project per
// turn. Called with s.mu held.
func (s *scheduler) dispatch() {
	for s.free > 0 && len(s.ready) > 0 {
		granted := false
		for n := len(s.ready); n > 0 && s.free > 0; n-- {
			sh := s.ready[0]
			s.ready = s.ready[1:]
			if len(sh.waiting) > 0 && sh.running < s.perProject {
				w := sh.waiting[0]
				sh.waiting = sh.waiting[1:]
				w.granted = true
				close(w.ch)
				sh.running++
				s.free--
				granted = true
			}
			if len(sh.waiting) > 0 {
				s.ready = append(s.ready, sh)
			} else {
				sh.inReady = false
			}
		}
		if !granted {
			return
		}
	}
}

var clockStart = time.Now()

// monotonic is the time since the package started, from the monotonic clock.
func monotonic() time.Duration { return time.Since(clockStart) }

// cpuMeter measures the CPU time of work done on one goroutine: it locks
// the goroutine to its OS thread so that the thread's CPU clock is the
// goroutine's.
type cpuMeter struct{ start time.Duration }

func startCPU() cpuMeter {
	runtime.LockOSThread()
	return cpuMeter{start: threadCPU()}
}

// stop returns the CPU time used since startCPU and unlocks the thread.
func (m cpuMeter) stop() time.Duration {
	d := threadCPU() - m.start
	runtime.UnlockOSThread()
	return max(d, 0)
}
