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

	"github.com/gatehouse-dev/gatehouse/edge/lease"
	"github.com/gatehouse-dev/gatehouse/edge/store"
)

// WorkerOptions configures Service.NewWorker.
type WorkerOptions struct {
	Transport Transport
	// Concurrency is how many messages are delivered at once (4 when zero).
	Concurrency int
	// MaxAttempts is the retry budget before a temporary failure becomes failed (8 when zero).
	MaxAttempts int
	// BaseBackoff and MaxBackoff bound the exponential backoff with jitter (30 s and 1 h).
	BaseBackoff, MaxBackoff time.Duration
	// PollInterval is the longest idle wait between queue scans (1 s when zero): the most a message
	// queued through another node waits before this node's worker may pick it up.
	PollInterval time.Duration
	// Node names this process among the nodes that share the store ("" for a random id); a
	// node restarted under the same id takes its own leases back at once.
	Node string
	// Shared says other processes deliver from the same store (a shared database). Start then
	// requeues only this node's leases, the others' being taken over when they run out; when
	// false (the embedded store, one process), Start requeues every lease it finds.
	Shared bool
	// LeaseTTL is how long a claim holds a message without being renewed (30 s when zero);
	// the worker renews its leases every LeaseTTL/3 while it delivers.
	LeaseTTL time.Duration
	Log      *slog.Logger
}

// Worker delivers queued messages: a dispatcher claims due messages under a lease in the
// store and hands them to Concurrency goroutines, each with its own transport session. Many
// workers (one per node) may share one store: each message is claimed by one of them, and a
// message whose lease runs out (its node died mid-send) is claimed again by any of them.
type Worker struct {
	o        WorkerOptions
	s        *Service
	node     *lease.Node
	jobs     chan *claimed
	stop     chan struct{}
	wg       sync.WaitGroup
	mu       sync.Mutex
	inflight map[string]*claimed
	stopping atomic.Bool
	started  bool
	free     chan struct{}
	// quiet is closed once the dispatcher and the deliveries ended; renewed once the lease
	// renewer did.
	quiet, renewed chan struct{}
	// resume and lastFull belong to the dispatcher goroutine (see claim).
	resume   int64
	lastFull time.Time
	// failing is set while the queue scans fail (Healthy).
	failing atomic.Bool
}

// ErrWorkerFailing is what Healthy answers while the worker cannot scan its queue.
var ErrWorkerFailing = errors.New("email: the delivery worker cannot read its queue")

// Healthy reports ErrWorkerFailing while the last queue scan failed (the store refuses it:
// nothing is delivered), nil once one succeeds again (module.Healthy: /readyz answers 503
// meanwhile). The cause is in the log.
func (w *Worker) Healthy() error {
	if w.failing.Load() {
		return ErrWorkerFailing
	}
	return nil
}

type claimed struct {
	m *Message
	// status is the message's status when it was claimed.
	status Status
	// holder is the claim's name in the lease record (lease.Node.Claim).
	holder string
}

// NewWorker returns the delivery worker of s; it starts nothing (Start runs it).
func (s *Service) NewWorker(o WorkerOptions) *Worker {
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
	if o.PollInterval <= 0 {
		o.PollInterval = time.Second
	}
	if o.LeaseTTL <= 0 {
		o.LeaseTTL = 30 * time.Second
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	return &Worker{o: o, s: s, node: lease.NewNode(o.Node), jobs: make(chan *claimed, o.Concurrency), stop: make(chan struct{}),
		inflight: map[string]*claimed{}, free: make(chan struct{}, 1), quiet: make(chan struct{}), renewed: make(chan struct{})}
}

// Start requeues the leases a stopped process left behind (every lease on a store of its
// own, this node's own on a shared one) and starts delivering.
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
	go func() {
		w.wg.Wait()
		close(w.quiet)
	}()
	go w.renewLoop()
	return nil
}

// Stop stops claiming, lets deliveries in flight finish and record their outcome (their leases
// are renewed meanwhile), releases claimed messages not yet started (due again at once, for
// another node or the next start), and closes the transport sessions. Stopping between the
// server's answer and its record would make another node send the message again, so Stop cuts
// nothing short (TestStopLetsDeliveryInFlightFinish). When ctx (the shutdown timeout) ends
// first, Stop returns its error; a delivery still in flight (an SMTP exchange cannot be cut
// halfway) keeps its lease, which another node takes over once it runs out, or this node at
// its restart.
func (w *Worker) Stop(ctx context.Context) error {
	if !w.started || w.stopping.Swap(true) {
		return nil
	}
	close(w.stop)
	select {
	case <-w.renewed:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (w *Worker) now() time.Time { return w.s.now() }

// leaseKey is where the lease of a claimed message lives (a lease.Lease); while it is held the
// message's queue entry sits at the lease's expiry, so the queue scan finds it if it runs out.
func leaseKey(ulid string) []byte { return store.Key(root, "lease", ulid) }

// recover makes the messages leased by a previous run of this process due now.
func (w *Worker) recover(ctx context.Context) error {
	type held struct {
		ulid string
		l    lease.Lease
	}
	var found []held
	err := w.s.db.View(ctx, func(txn *store.Txn) error {
		return txn.Iterate(store.IterOptions{Prefix: store.Prefix(root, "lease")}, func(k, v []byte) (bool, error) {
			l, _, err := lease.Decode(v)
			if err != nil {
				l = lease.Lease{} // unreadable: nobody's, long run out
			}
			if !w.o.Shared || l.Node() == w.node.ID() {
				found = append(found, held{store.LastPart(k), l})
			}
			return true, nil
		})
	})
	if err != nil {
		return err
	}
	for _, h := range found {
		err := w.s.db.Update(ctx, func(txn *store.Txn) error {
			l, ok, err := lease.Read(txn, leaseKey(h.ulid))
			if err != nil || !ok || l != h.l {
				return err // gone or taken meanwhile
			}
			if err := dropLease(txn, h.ulid, l); err != nil {
				return err
			}
			m, err := load(txn, h.ulid)
			if err != nil {
				return err
			}
			if deliverable(m) && m.Due == 0 {
				m.Due = w.now().UnixNano()
				note(m, LogEntry{Event: "requeued", Detail: "the process delivering it stopped; delivering again"}, w.s.stamp())
				return save(txn, m, m.Status, 0)
			}
			return nil
		})
		if err != nil && !errors.Is(err, ErrMessageNotFound) {
			return err
		}
	}
	if len(found) > 0 {
		w.o.Log.Info("email: requeued messages leased before restart", "count", len(found))
	}
	return nil
}

// deliverable reports whether m still waits for a delivery attempt.
func deliverable(m *Message) bool { return !m.Status.Terminal() && m.Status != StatusDelivered }

// dropLease removes a lease and the queue entry at its expiry.
func dropLease(txn *store.Txn, ulid string, l lease.Lease) error {
	if l.Until != 0 {
		if err := txn.Delete(queueKey(l.Until, ulid)); err != nil {
			return err
		}
	}
	return txn.Delete(leaseKey(ulid))
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
			w.failing.Store(err != nil)
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
		wait := w.o.PollInterval
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

// The queue scan resumes from where the previous one left what was still pending, so the
// entries of delivered messages (tombstones until compaction) are not walked again and again.
// Many nodes (and, on a shared database, concurrent transactions) queue messages, so due times
// do not grow in commit order: a message is due at its transaction's time, which precedes its
// commit by little and another node's clock by little; resumeMargin covers that, and a scan
// from the start every fullScanEvery covers anything else.
const (
	resumeMargin  = 5 * time.Second
	fullScanEvery = 30 * time.Second
)

// claim leases up to n due messages and returns them with the due time of the first message
// not yet due (0 when none). The scan reads a snapshot; each claim is decided again in one
// Update (take), so two nodes that scanned the same message do not both claim it.
func (w *Worker) claim(n int) ([]*claimed, int64, error) {
	nowT := w.now()
	now := nowT.UnixNano()
	full := nowT.Sub(w.lastFull) > fullScanEvery
	o := store.IterOptions{Prefix: store.Prefix(root, kQueue), KeysOnly: true}
	if !full && w.resume > 0 {
		o.Start = store.Key(root, kQueue, fmt.Sprintf("%020d", w.resume))
	}
	type hit struct {
		due  int64
		ulid string
	}
	var hits []hit
	// next is the first entry not yet due; left the first due entry this scan leaves behind.
	var next, left int64
	err := w.s.db.View(context.Background(), func(txn *store.Txn) error {
		hits, next, left = hits[:0], 0, 0
		return txn.Iterate(o, func(k, _ []byte) (bool, error) {
			due, u, ok := splitQueueKey(k)
			if !ok {
				return true, nil
			}
			if due > now {
				next = due
				return false, nil
			}
			w.mu.Lock()
			busy := w.inflight[u] != nil
			w.mu.Unlock()
			if busy {
				// Requeued (a retry) before its delivery goroutine let go: look again next time.
				if left == 0 {
					left = due
				}
				return true, nil
			}
			hits = append(hits, hit{due, u})
			if len(hits) == n {
				if left == 0 {
					left = due // more may follow
				}
				return false, nil
			}
			return true, nil
		})
	})
	if err != nil {
		return nil, 0, err
	}
	var out []*claimed
	if len(hits) > 0 {
		err = w.s.db.Update(context.Background(), func(txn *store.Txn) error {
			out = out[:0]
			for _, h := range hits {
				c, err := w.take(txn, h.due, h.ulid, now)
				if err != nil {
					return err
				}
				if c != nil {
					out = append(out, c)
				}
			}
			return nil
		})
		if err != nil {
			return nil, 0, err
		}
	}
	resume := now - int64(resumeMargin)
	if left > 0 && left < resume {
		resume = left
	}
	w.resume = resume
	if full {
		w.lastFull = nowT
	}
	w.mu.Lock()
	for _, c := range out {
		w.inflight[c.m.ID[len(idPrefix):]] = c
	}
	w.mu.Unlock()
	return out, next, nil
}

// take claims the message of queue entry (due, ulid) inside txn, when the entry still stands
// for a message waiting: queued and due, or leased by a claim whose lease ran out. It moves
// the message to a new lease: the queue entry goes to the lease's expiry. It returns nil for
// an entry another claim took meanwhile, and removes a stale one.
func (w *Worker) take(txn *store.Txn, due int64, ulid string, now int64) (*claimed, error) {
	m, err := load(txn, ulid)
	if errors.Is(err, ErrMessageNotFound) {
		return nil, txn.Delete(queueKey(due, ulid))
	}
	if err != nil {
		return nil, err
	}
	prevDue := m.Due
	switch {
	case m.Due == due && deliverable(m):
	case m.Due == 0:
		l, ok, err := lease.Read(txn, leaseKey(ulid))
		if err != nil {
			return nil, err
		}
		if !ok || l.Until != due {
			return nil, txn.Delete(queueKey(due, ulid)) // stale: its lease was renewed or ended
		}
		if !l.Expired(now) {
			return nil, nil
		}
		if err := dropLease(txn, ulid, l); err != nil {
			return nil, err
		}
		if !deliverable(m) {
			return nil, nil
		}
		note(m, LogEntry{Event: "requeued", Detail: "the lease of the node delivering it (" + l.Node() + ") ran out; delivering again"}, w.s.stamp())
	default:
		return nil, txn.Delete(queueKey(due, ulid))
	}
	m.Due = 0
	if err := save(txn, m, m.Status, prevDue); err != nil {
		return nil, err
	}
	l := lease.Lease{Holder: w.node.Claim(), Until: now + int64(w.o.LeaseTTL)}
	if err := txn.Set(queueKey(l.Until, ulid), nil); err != nil {
		return nil, err
	}
	if err := lease.Write(txn, leaseKey(ulid), l); err != nil {
		return nil, err
	}
	return &claimed{m: m, status: m.Status, holder: l.Holder}, nil
}

// renewLoop renews the leases of the claimed messages every LeaseTTL/3 until the deliveries
// ended.
func (w *Worker) renewLoop() {
	defer close(w.renewed)
	t := time.NewTicker(w.o.LeaseTTL / 3)
	defer t.Stop()
	for {
		select {
		case <-w.quiet:
			return
		case <-t.C:
			if err := w.renew(); err != nil {
				w.o.Log.Error("email: renewing leases failed", "err", err)
			}
		}
	}
}

// renew pushes the expiry of every lease this worker holds to LeaseTTL from now. A lease
// another node took over (this one ran out first) is left alone: the outcome of its attempt
// is then recorded as an attempt only.
func (w *Worker) renew() error {
	w.mu.Lock()
	cs := make([]*claimed, 0, len(w.inflight))
	for _, c := range w.inflight {
		cs = append(cs, c)
	}
	w.mu.Unlock()
	if len(cs) == 0 {
		return nil
	}
	until := w.now().Add(w.o.LeaseTTL).UnixNano()
	lost := 0
	err := w.s.db.Update(context.Background(), func(txn *store.Txn) error {
		lost = 0
		for _, c := range cs {
			u := c.m.ID[len(idPrefix):]
			l, ok, err := lease.Read(txn, leaseKey(u))
			if err != nil {
				return err
			}
			if !ok || l.Holder != c.holder {
				lost++
				continue
			}
			if l.Until == until {
				continue
			}
			if err := txn.Delete(queueKey(l.Until, u)); err != nil {
				return err
			}
			l.Until = until
			if err := txn.Set(queueKey(until, u), nil); err != nil {
				return err
			}
			if err := lease.Write(txn, leaseKey(u), l); err != nil {
				return err
			}
		}
		return nil
	})
	if err == nil && lost > 0 {
		w.o.Log.Warn("email: leases ran out and were taken over by another node", "count", lost)
	}
	return err
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
		w.finish(c, Outcome{Result: Retry, Detail: "suppression check: " + err.Error()}, false)
		return
	}
	if suppressed {
		w.finish(c, Outcome{}, true)
		return
	}
	out := sess.Deliver(ctx, m)
	w.finish(c, out, false)
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
		l, ok, err := lease.Read(txn, leaseKey(u))
		if err != nil || !ok || l.Holder != c.holder {
			return err // taken over meanwhile
		}
		if err := dropLease(txn, u, l); err != nil {
			return err
		}
		m, err := load(txn, u)
		if err != nil {
			return err
		}
		if m.Status == c.status && m.Due == 0 {
			m.Due = w.now().UnixNano()
			return save(txn, m, m.Status, 0)
		}
		return nil
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
func (w *Worker) finish(c *claimed, out Outcome, suppressed bool) {
	var m *Message
	err := w.s.db.Update(context.Background(), func(txn *store.Txn) error {
		var err error
		if m, err = w.apply(txn, c, out, suppressed); err != nil {
			return err
		}
		if m.Status == StatusBounced && out.Result == Bounce {
			return w.s.suppress(txn, m.Org, m.To.Email, "bounce", fmt.Sprintf("%s: %d %s", m.ID, out.Code, out.Detail))
		}
		return nil
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
}

// apply moves one message according to its attempt's outcome, inside txn.
func (w *Worker) apply(txn *store.Txn, c *claimed, out Outcome, suppressed bool) (*Message, error) {
	u := c.m.ID[len(idPrefix):]
	m, err := load(txn, u)
	if err != nil {
		return nil, err
	}
	l, ok, err := lease.Read(txn, leaseKey(u))
	if err != nil {
		return nil, err
	}
	prev, prevDue := m.Status, m.Due
	at := w.s.stamp()
	if !ok || l.Holder != c.holder {
		// The lease ran out and another claim holds the message (or it was requeued): that
		// claim records its own outcome; this attempt goes in the log only.
		note(m, LogEntry{Event: "attempt", Code: out.Code, Detail: out.Detail}, at)
		return m, w.s.persist(context.Background(), txn, m, prev, prevDue)
	}
	if err := dropLease(txn, u, l); err != nil {
		return nil, err
	}
	if m.Status != c.status {
		// An event moved the message while it was in flight; record the attempt only.
		note(m, LogEntry{Event: "attempt", Code: out.Code, Detail: out.Detail}, at)
		return m, w.s.persist(context.Background(), txn, m, prev, prevDue)
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
	return m, w.s.persist(context.Background(), txn, m, prev, prevDue)
}
