package files

import (
	"context"
	"errors"
	"sync"
	"time"
)

// Errors of the build pool.
var (
	// errPoolBusy: the project's queue is full, or no slot and budget came in time.
	errPoolBusy = errors.New("files: variant builds busy")
)

// buildPool shares variant builds between projects as plugins/host's scheduler shares guest
// calls: at most slots builds run at once, all projects together (one per core). It is
// work-conserving: a project alone may use every slot, but while another project has a build
// waiting, a project holds at most perProject (all but one) and the waiting projects are
// served in turn, one build each, so the next slot that frees goes to the other project.
// Each build also reserves its memory estimate from one budget and runs only when it fits; a
// build estimated over the whole budget reserves all of it, so it runs alone (every source
// within files.variant_max_pixels gets its variants, decisions.md 9.3, whatever the budget). A
// project with queue builds already waiting is refused at once; a waiting build that gets no
// slot within wait is refused too (the API answers 503 with Retry-After).
type buildPool struct {
	slots, perProject, queue int
	budget                   int64
	wait                     time.Duration

	mu      sync.Mutex
	free    int
	used    int64
	waiting int
	shares  map[string]*share
	ready   []*share // projects with waiting builds, in turn order
}

// share is one project's part of the pool; guarded by buildPool.mu.
type share struct {
	project string
	running int
	waiting []*waiter
	inReady bool
}

type waiter struct {
	ch      chan struct{}
	cost    int64
	granted bool
}

func newBuildPool(slots, queue int, budget int64, wait time.Duration) *buildPool {
	slots = max(1, slots)
	return &buildPool{slots: slots, perProject: max(1, slots-1), queue: max(1, queue), budget: budget,
		wait: wait, free: slots, shares: map[string]*share{}}
}

// acquire waits for a slot and cost bytes of the budget for one build of project, in turn.
// The returned release gives both back.
func (p *buildPool) acquire(ctx context.Context, project string, cost int64) (func(), error) {
	cost = min(cost, p.budget) // larger than the budget: runs alone
	p.mu.Lock()
	sh := p.shares[project]
	if sh == nil {
		sh = &share{project: project}
		p.shares[project] = sh
	}
	switch {
	case p.free > 0 && len(sh.waiting) == 0 && p.mayRun(sh) && p.used+cost <= p.budget:
		p.take(sh, cost)
		p.mu.Unlock()
		return p.releaser(sh, cost), nil
	case len(sh.waiting) >= p.queue:
		p.mu.Unlock()
		return nil, errPoolBusy
	}
	w := &waiter{ch: make(chan struct{}), cost: cost}
	sh.waiting = append(sh.waiting, w)
	p.waiting++
	if !sh.inReady {
		sh.inReady = true
		p.ready = append(p.ready, sh)
	}
	p.mu.Unlock()

	t := time.NewTimer(p.wait)
	defer t.Stop()
	var err error
	select {
	case <-w.ch:
		return p.releaser(sh, cost), nil
	case <-t.C:
		err = errPoolBusy
	case <-ctx.Done():
		err = ctx.Err()
	}
	p.mu.Lock()
	if w.granted { // granted while giving up: hand the slot on
		p.mu.Unlock()
		p.releaser(sh, cost)()
		return nil, err
	}
	for i, o := range sh.waiting {
		if o == w {
			sh.waiting = append(sh.waiting[:i], sh.waiting[i+1:]...)
			p.waiting--
			break
		}
	}
	p.forget(sh)
	p.mu.Unlock()
	return nil, err
}

// mayRun says sh may start one more build: under its perProject share, or nobody else has a
// build waiting. Called with p.mu held.
func (p *buildPool) mayRun(sh *share) bool {
	return sh.running < p.perProject || p.waiting == len(sh.waiting)
}

// take gives sh a slot and cost bytes. Called with p.mu held.
func (p *buildPool) take(sh *share, cost int64) {
	p.free--
	p.used += cost
	sh.running++
}

func (p *buildPool) releaser(sh *share, cost int64) func() {
	var once sync.Once
	return func() {
		once.Do(func() {
			p.mu.Lock()
			defer p.mu.Unlock()
			p.free++
			p.used -= cost
			sh.running--
			if sh.inReady { // its turn is over: the other waiting projects go first
				for i, o := range p.ready {
					if o == sh {
						p.ready = append(append(p.ready[:i], p.ready[i+1:]...), sh)
						break
					}
				}
			}
			p.dispatch()
			p.forget(sh)
		})
	}
}

// forget drops an idle project's share. Called with p.mu held.
func (p *buildPool) forget(sh *share) {
	if sh.running == 0 && len(sh.waiting) == 0 && !sh.inReady {
		delete(p.shares, sh.project)
	}
}

// dispatch hands free slots to waiting projects, one build per project per turn; a project
// whose next build does not fit in what is left of the budget lets the others pass. Called
// with p.mu held.
func (p *buildPool) dispatch() {
	for p.free > 0 && len(p.ready) > 0 {
		granted := false
		for n := len(p.ready); n > 0 && p.free > 0; n-- {
			sh := p.ready[0]
			p.ready = p.ready[1:]
			if len(sh.waiting) > 0 && p.mayRun(sh) && p.used+sh.waiting[0].cost <= p.budget {
				w := sh.waiting[0]
				sh.waiting = sh.waiting[1:]
				p.waiting--
				w.granted = true
				close(w.ch)
				p.take(sh, w.cost)
				granted = true
			}
			if len(sh.waiting) > 0 {
				p.ready = append(p.ready, sh)
			} else {
				sh.inReady = false
				p.forget(sh)
			}
		}
		if !granted {
			return
		}
	}
}

// stats reports the builds waiting and the budget bytes in use.
func (p *buildPool) stats() (waiting int, used int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.waiting, p.used
}
