package email

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gatehouse-dev/gatehouse/edge/store"
)

// WorkerOptions configures NewWorker.
type WorkerOptions struct {
	Service   *Service
	Transport Transport
	// Concurrency is how many messages are delivered at once (4 when zero).
	Concurrency int
	// MaxAttempts is the retry budget before a temporary failure becomes failed (8 when zero).
	MaxAttempts int
	// BaseBackoff and MaxBackoff bound the exponential backoff with jitter (30 s and 1 h).
	BaseBackoff, MaxBackoff time.Duration
	// Poll is the longest idle wait between queue scans (1 s when zero).
	Poll time.Duration
	Log  *slog.Logger
}

// Worker delivers queued messages: a dispatcher claims due messages under a lease and hands
// them to Concurrency goroutines, each with its own transport session.
type Worker struct {
	o        WorkerOptions
	s        *Service
	jobs     chan *claimed
	stop     chan struct{}
	wg       sync.WaitGroup
	mu       sync.Mutex
	inflight map[string]bool
	stopping atomic.Bool
	started  bool
	free     chan struct{}
	// resume and lastFull belong to the dispatcher goroutine (see claim).
	resume   int64
	lastFull time.Time
}

type claimed struct {
	m *Message
	// status is the message's status when it was claimed.
	status Status
}

// NewWorker returns a worker; Start runs it.
func NewWorker(o WorkerOptions) *Worker {
	if o.Concurrency <= 0 {
		o.Concurrency = 4
	}
	if o.MaxAttempts <= 0 {
		o.MaxAttempts = 8
	}
	if o.BaseBackoff <= 0 {
		o.BaseBackoff = 30 * time.Second
	}
	if o.MaxBackoff <= 0 {
		o.MaxBackoff = time.Hour
	}
	if o.Poll <= 0 {
		o.Poll = time.Second
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	return &Worker{o: o, s: o.Service, jobs: make(chan *claimed, o.Concurrency), stop: make(chan struct{}), inflight: map[string]bool{}, free: make(chan struct{}, 1)}
}

// Start requeues the leases a stopped process left behind (badger is single-process, so no
// other holder can exist) and starts delivering.
func (w *Worker) Start(ctx context.Context) error {
	if r, ok := w.o.Transport.(Recoverer); ok {
		if err := r.Recover(); err != nil {
			return fmt.Errorf("email: %s transport recovery: %w", w.o.Transport.Name(), err)
		}
	}
	if err := w.recover(ctx); err != nil {
		return err
	}
	w.started = true
	for i := 0; i < w.o.Concurrency; i++ {
		w.wg.Add(1)
		go w.deliverLoop()
	}
	w.wg.Add(1)
	go w.dispatch()
	return nil
}

// Stop stops claiming, lets deliveries in flight finish (bounded by ctx), releases claimed
// messages not yet started, and closes the transport sessions.
func (w *Worker) Stop(ctx context.Context) error {
	if !w.started || w.stopping.Swap(true) {
		return nil
	}
	close(w.stop)
	done := make(chan struct{})
	go func() {
		w.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (w *Worker) now() time.Time { return w.s.now() }

func leaseKey(ulid string) []byte { return store.Key(root, "lease", ulid) }

// recover makes every message leased by a previous process due now.
func (w *Worker) recover(ctx context.Context) error {
	var ulids []string
	err := w.s.db.View(ctx, func(txn *store.Txn) error {
		return txn.Iterate(store.IterOptions{Prefix: store.Prefix(root, "lease"), KeysOnly: true}, func(k, _ []byte) (bool, error) {
			ulids = append(ulids, store.LastPart(k))
			return true, nil
		})
	})
	if err != nil {
		return err
	}
	for _, u := range ulids {
		err := w.s.db.Update(ctx, func(txn *store.Txn) error {
			m, err := load(txn, u)
			if err != nil {
				return err
			}
			if !m.Status.Terminal() && m.Status != StatusDelivered && m.Due == 0 {
				m.Due = w.now().UnixNano()
				note(m, LogEntry{Event: "requeued", Detail: "the process delivering it stopped; delivering again"}, w.s.stamp())
				if err := save(txn, m, m.Status, 0); err != nil {
					return err
				}
			}
			return txn.Delete(leaseKey(u))
		})
		if err != nil && !errors.Is(err, ErrMessageNotFound) {
			return err
		}
	}
	if len(ulids) > 0 {
		w.o.Log.Info("email: requeued messages leased before restart", "count", len(ulids))
	}
	return nil
}

// dispatch claims due messages while a delivery goroutine is free and sleeps until the next
// message is due, a send wakes it, or a delivery finishes.
func (w *Worker) dispatch() {
	defer w.wg.Done()
	defer close(w.jobs)
	for {
		room := cap(w.jobs) - len(w.jobs)
		var next int64
		n := 0
		if room > 0 {
			var batch []*claimed
			var err error
			batch, next, err = w.claim(room)
			if err != nil {
				w.o.Log.Error("email: claim failed", "err", err)
			}
			for _, c := range batch {
				w.jobs <- c
			}
			n = len(batch)
		}
		if n > 0 && n == room {
			select {
			case <-w.stop:
				return
			default:
				continue
			}
		}
		wait := w.o.Poll
		if next > 0 {
			if d := time.Duration(next - w.now().UnixNano()); d < wait {
				wait = max(d, time.Millisecond)
			}
		}
		t := time.NewTimer(wait)
		select {
		case <-w.stop:
			t.Stop()
			return
		case <-w.s.Wake():
		case <-w.free:
		case <-t.C:
		}
		t.Stop()
	}
}

// fullScanEvery bounds how long the claim scan trusts its resume point before it scans the
// whole queue again (a safety net; due times of new messages only grow).
const fullScanEvery = 30 * time.Second

// claim leases up to n due messages: it moves each from the queue to a lease entry. It
// returns them with the due time of the first message not yet due (0 when none).
//
// Deleted queue entries stay as tombstones until compaction, so scanning from the start of
// the queue each time would cost O(messages delivered); the scan resumes from the due time of
// the last entry it claimed instead. That is safe because new messages are due at their
// commit time (which only grows), and retries and released leases are due later still.
func (w *Worker) claim(n int) ([]*claimed, int64, error) {
	var out []*claimed
	var next, resume int64
	nowT := w.now()
	full := nowT.Sub(w.lastFull) > fullScanEvery
	err := w.s.db.Update(context.Background(), func(txn *store.Txn) error {
		out, next, resume = out[:0], 0, w.resume
		now := nowT.UnixNano()
		o := store.IterOptions{Prefix: store.Prefix(root, kQueue), KeysOnly: true}
		if !full && w.resume > 0 {
			o.Start = store.Key(root, kQueue, fmt.Sprintf("%020d", w.resume))
		}
		type hit struct {
			due  int64
			ulid string
		}
		var hits []hit
		var skipped int64
		err := txn.Iterate(o, func(k, _ []byte) (bool, error) {
			due, u, ok := splitQueueKey(k)
			if !ok {
				return true, nil
			}
			if due > now {
				next = due
				return false, nil
			}
			w.mu.Lock()
			busy := w.inflight[u]
			w.mu.Unlock()
			if busy {
				// Requeued (a retry) before its delivery goroutine let go: look again next time.
				if skipped == 0 || due < skipped {
					skipped = due
				}
			} else {
				hits = append(hits, hit{due, u})
			}
			return len(hits) < n, nil
		})
		if err != nil {
			return err
		}
		for _, h := range hits {
			resume = max(resume, h.due)
			m, err := load(txn, h.ulid)
			if errors.Is(err, ErrMessageNotFound) || (err == nil && m.Due != h.due) {
				if err := txn.Delete(queueKey(h.due, h.ulid)); err != nil {
					return err
				}
				continue
			}
			if err != nil {
				return err
			}
			m.Due = 0
			if err := save(txn, m, m.Status, h.due); err != nil {
				return err
			}
			if err := txn.Set(leaseKey(h.ulid), nil); err != nil {
				return err
			}
			out = append(out, &claimed{m: m, status: m.Status})
		}
		if skipped > 0 && (resume == 0 || skipped < resume) {
			resume = skipped
		}
		return nil
	})
	if err != nil {
		return nil, 0, err
	}
	if full {
		w.lastFull = nowT
	}
	w.resume = resume
	w.mu.Lock()
	for _, c := range out {
		w.inflight[c.m.ID[len(idPrefix):]] = true
	}
	w.mu.Unlock()
	return out, next, nil
}

func (w *Worker) deliverLoop() {
	defer w.wg.Done()
	sess := w.o.Transport.Session()
	defer sess.Close()
	for c := range w.jobs {
		if w.stopping.Load() {
			w.release(c)
			continue
		}
		w.deliver(sess, c)
	}
}

// deliver makes one attempt at c's message and records the outcome.
func (w *Worker) deliver(sess Session, c *claimed) {
	defer w.done(c)
	m := c.m
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	suppressed, err := w.s.IsSuppressed(ctx, m.Org, m.To.Email)
	if err != nil {
		w.o.Log.Error("email: suppression check failed", "id", m.ID, "err", err)
		w.finish(ctx, c, Outcome{Result: Retry, Detail: "suppression check: " + err.Error()}, false)
		return
	}
	if suppressed {
		w.finish(ctx, c, Outcome{}, true)
		return
	}
	out := sess.Deliver(ctx, m)
	w.finish(ctx, c, out, false)
}

func (w *Worker) done(c *claimed) {
	w.mu.Lock()
	delete(w.inflight, c.m.ID[len(idPrefix):])
	w.mu.Unlock()
	select {
	case w.free <- struct{}{}:
	default:
	}
}

// release gives a claimed but undelivered message back to the queue (shutdown).
func (w *Worker) release(c *claimed) {
	defer w.done(c)
	u := c.m.ID[len(idPrefix):]
	err := w.s.db.Update(context.Background(), func(txn *store.Txn) error {
		m, err := load(txn, u)
		if err != nil {
			return err
		}
		if m.Status == c.status && m.Due == 0 {
			m.Due = w.now().UnixNano()
			if err := save(txn, m, m.Status, 0); err != nil {
				return err
			}
		}
		return txn.Delete(leaseKey(u))
	})
	if err != nil {
		w.o.Log.Warn("email: release failed; the lease will run out", "id", c.m.ID, "err", err)
	}
}

// backoff is the wait before attempt n+1: exponential from BaseBackoff, capped, with jitter
// (between half and all of it).
func (w *Worker) backoff(attempts int) time.Duration {
	d := w.o.BaseBackoff << min(attempts-1, 30)
	if d <= 0 || d > w.o.MaxBackoff {
		d = w.o.MaxBackoff
	}
	return d/2 + rand.N(d/2+1)
}

// finish records an attempt's outcome (or a suppression) through the status machine. The
// store's group committer writes the outcomes of concurrent deliveries in one commit; finish
// returns after the commit holding this one.
func (w *Worker) finish(ctx context.Context, c *claimed, out Outcome, suppressed bool) {
	var m *Message
	err := w.s.db.Update(context.Background(), func(txn *store.Txn) error {
		var err error
		m, err = w.apply(txn, c, out, suppressed)
		return err
	})
	if err != nil {
		w.o.Log.Error("email: recording a delivery outcome failed; it is delivered again after a restart", "id", c.m.ID, "err", err)
		return
	}
	switch {
	case suppressed:
		w.s.metrics.outcome("suppressed")
	case out.Result == Retry && m.Status == StatusQueued:
		w.s.metrics.outcome("deferred")
	default:
		w.s.metrics.outcome(string(m.Status))
	}
	if m.Status == StatusBounced && out.Result == Bounce {
		if err := w.s.Suppress(ctx, m.Org, m.To.Email, "bounce", fmt.Sprintf("%s: %d %s", m.ID, out.Code, out.Detail)); err != nil {
			w.o.Log.Error("email: suppressing a bounced address failed", "id", m.ID, "err", err)
		}
	}
}

// apply moves one message according to its attempt's outcome, inside txn.
func (w *Worker) apply(txn *store.Txn, c *claimed, out Outcome, suppressed bool) (*Message, error) {
	u := c.m.ID[len(idPrefix):]
	m, err := load(txn, u)
	if err != nil {
		return nil, err
	}
	prev, prevDue := m.Status, m.Due
	at := w.s.stamp()
	if m.Status != c.status {
		// An event moved the message while it was in flight; record the attempt only.
		note(m, LogEntry{Event: "attempt", Code: out.Code, Detail: out.Detail}, at)
		return m, w.saveDone(txn, m, prev, prevDue, u)
	}
	m.Due = 0
	if !suppressed {
		m.Attempts++
	}
	e := LogEntry{Code: out.Code, Detail: out.Detail}
	var moveErr error
	switch {
	case suppressed:
		moveErr = advance(m, StatusSuppressed, LogEntry{Detail: "the address is on the organization's suppression list; not sent"}, at)
	case out.Result == Delivered:
		if m.Status == StatusQueued {
			moveErr = advance(m, StatusSent, LogEntry{Detail: "handed to the " + w.o.Transport.Name() + " transport"}, at)
		}
		if moveErr == nil {
			moveErr = advance(m, StatusDelivered, e, at)
		}
	case out.Result == Bounce:
		moveErr = advance(m, StatusBounced, e, at)
	case out.Result == Fail:
		moveErr = advance(m, StatusFailed, e, at)
	case m.Attempts >= w.o.MaxAttempts:
		e.Detail = fmt.Sprintf("gave up after %d attempts: %s", m.Attempts, out.Detail)
		moveErr = advance(m, StatusFailed, e, at)
	default:
		wait := w.backoff(m.Attempts)
		m.Due = w.now().Add(wait).UnixNano()
		e.Event = "deferred"
		e.Detail = fmt.Sprintf("%s; attempt %d of %d, next in %s", out.Detail, m.Attempts+1, w.o.MaxAttempts, wait.Round(time.Millisecond))
		note(m, e, at)
	}
	if moveErr != nil {
		note(m, LogEntry{Event: "attempt", Code: out.Code, Detail: out.Detail}, at)
	}
	return m, w.saveDone(txn, m, prev, prevDue, u)
}

func (w *Worker) saveDone(txn *store.Txn, m *Message, prev Status, prevDue int64, u string) error {
	if err := w.s.persist(context.Background(), txn, m, prev, prevDue); err != nil {
		return err
	}
	return txn.Delete(leaseKey(u))
}
