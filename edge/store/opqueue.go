package store

import (
	"context"
	"sync"
)

// opQueue hands Updates to a group committer's one goroutine, the same for both backends:
// submit queues a function and waits for its verdict, loop gathers what is queued into groups
// for the backend's run, stop drains the queue and ends the loop.
type opQueue struct {
	in   chan *op
	quit chan struct{}
	done chan struct{}
	// mu orders stop after every hand-over in flight: callers hold it shared.
	mu     sync.RWMutex
	closed bool
}

func (q *opQueue) init() {
	q.in, q.quit, q.done = make(chan *op, queueCap), make(chan struct{}), make(chan struct{})
}

// submit queues fn and waits for its verdict (unsynced: not for its durability). Once queued,
// fn runs and the caller waits for the commit even if ctx ends, so an acknowledged write is
// never reported as failed.
func (q *opQueue) submit(ctx context.Context, fn func(*Txn) error, unsynced bool) error {
	o := &op{fn: fn, done: make(chan struct{}), skipSync: unsynced}
	q.mu.RLock()
	if q.closed {
		q.mu.RUnlock()
		return ErrClosed
	}
	select {
	case q.in <- o:
		q.mu.RUnlock()
	case <-ctx.Done():
		q.mu.RUnlock()
		return ctx.Err()
	}
	<-o.done
	if o.panicked != nil {
		panic(o.panicked)
	}
	return o.err
}

// loop gathers what is queued (at most maxOps) while run commits the group before it, and
// hands each group to run, which answers every op of it.
func (q *opQueue) loop(run func([]*op)) {
	defer close(q.done)
	batch := make([]*op, 0, maxOps)
	for {
		select {
		case o := <-q.in:
			batch = append(batch[:0], o)
		case <-q.quit:
			// No hand-over happens after quit: drain what is queued, then stop.
			for {
				select {
				case o := <-q.in:
					run([]*op{o})
				default:
					return
				}
			}
		}
	gather:
		for len(batch) < maxOps {
			select {
			case o := <-q.in:
				batch = append(batch, o)
			default:
				break gather
			}
		}
		run(batch)
	}
}

// stop refuses new Updates and returns once everything queued is committed.
func (q *opQueue) stop() {
	q.mu.Lock()
	if !q.closed {
		q.closed = true
		close(q.quit)
	}
	q.mu.Unlock()
	<-q.done
}
