package forms

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"

	"github.com/gatehouse-dev/gatehouse/edge/store"
)

// ErrClosed reports a commit asked of a stopped committer.
var ErrClosed = errors.New("forms: committer closed")

// Group commit limits: one badger transaction takes at most this many writes or bytes.
const (
	maxBatchWrites = 512
	maxBatchBytes  = 8 << 20
)

// committer groups concurrent writes into one transaction, so many submissions share one
// durable commit (one fsync when storage.sync_writes is on). Each caller is answered only
// after the commit that holds its write returned.
type committer struct {
	db   *store.DB
	reqs chan *commitReq
	quit chan struct{}
	done chan struct{}
	// mu orders Close after every send in flight: senders hold it shared.
	mu     sync.RWMutex
	closed bool
	// commits and writes count transactions and the writes they held (writes/commits is the
	// grouping factor).
	commits, writes atomic.Uint64
}

type commitReq struct {
	key, val []byte
	errc     chan error
}

func newCommitter(db *store.DB) *committer {
	c := &committer{db: db, reqs: make(chan *commitReq, 4096), quit: make(chan struct{}), done: make(chan struct{})}
	go c.loop()
	return c
}

// Commit writes key=val durably, sharing the commit with concurrent callers.
func (c *committer) Commit(ctx context.Context, key, val []byte) error {
	r := &commitReq{key: key, val: val, errc: make(chan error, 1)}
	c.mu.RLock()
	if c.closed {
		c.mu.RUnlock()
		return ErrClosed
	}
	select {
	case c.reqs <- r:
		c.mu.RUnlock()
	case <-ctx.Done():
		c.mu.RUnlock()
		return ctx.Err()
	}
	// Once queued the write happens; wait for its verdict even if ctx ends, so an
	// acknowledged write is never reported as failed.
	return <-r.errc
}

func (c *committer) loop() {
	defer close(c.done)
	batch := make([]*commitReq, 0, maxBatchWrites)
	for {
		var first *commitReq
		select {
		case first = <-c.reqs:
		case <-c.quit:
			// Drain what was queued before the quit, then stop.
			for {
				select {
				case r := <-c.reqs:
					c.flush(append(batch[:0], r))
				default:
					return
				}
			}
		}
		batch = append(batch[:0], first)
		size := len(first.key) + len(first.val)
	fill:
		for len(batch) < maxBatchWrites && size < maxBatchBytes {
			select {
			case r := <-c.reqs:
				batch = append(batch, r)
				size += len(r.key) + len(r.val)
			default:
				break fill
			}
		}
		c.flush(batch)
	}
}

// flush commits a batch in one transaction; if it is too big, each write on its own.
func (c *committer) flush(batch []*commitReq) {
	err := c.db.Update(context.Background(), func(tx *store.Txn) error {
		for _, r := range batch {
			if err := tx.Set(r.key, r.val); err != nil {
				return err
			}
		}
		return nil
	})
	if err == nil {
		c.commits.Add(1)
		c.writes.Add(uint64(len(batch)))
	}
	if errors.Is(err, store.ErrTooBig) && len(batch) > 1 {
		for _, r := range batch {
			c.flush([]*commitReq{r})
		}
		return
	}
	for _, r := range batch {
		r.errc <- err
	}
}

// Close stops the committer after the writes already queued are committed.
func (c *committer) Close() {
	c.mu.Lock()
	if !c.closed {
		c.closed = true
		close(c.quit)
	}
	c.mu.Unlock()
	<-c.done
}
