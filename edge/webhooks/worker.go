package webhooks

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gatehouse-dev/gatehouse/edge/lease"
	"github.com/gatehouse-dev/gatehouse/edge/store"
)

// WorkerOptions configures NewWorker; zero values take the defaults in brackets.
type WorkerOptions struct {
	// Concurrency is how many deliveries are attempted at once [4].
	Concurrency int
	// PollInterval is how often the queue is scanned when nothing woke the worker [1 s].
	PollInterval time.Duration
	// BaseBackoff is the wait after a first failure, doubled after each next one [30 s].
	BaseBackoff time.Duration
	// Node names this process among the nodes that share the store ["": a random id]; a node
	// restarted under the same id takes its own leases back at once.
	Node string
	// Shared says other processes deliver from the same store (a shared database): Start then
	// requeues only this node's leases, the others' being taken over when they run out; when
	// false (the embedded store, one process), Start requeues every lease it finds.
	Shared bool
	// LeaseTTL is how long a claimed delivery stays this node's [the egress timeout plus 30 s].
	// An attempt is bounded by the egress timeout, so it ends (and records its outcome) well
	// within its lease and the lease is never renewed.
	LeaseTTL time.Duration
}

// Worker delivers the pending deliveries: at least once, retried with backoff, in order per
// order key. Start launches it and Stop ends it: Stop claims nothing more and lets the attempts
// in flight finish and record their outcome; only an attempt the shutdown timeout cuts short
// is released (due again at once, for the next start or another node). Many workers (one per
// node) may share one store: each attempt is claimed under a lease in the store (edge/lease),
// so one worker makes it; a delivery whose lease runs out (its node died mid-attempt) is
// claimed again by any of them.
type Worker struct {
	s    *Service
	o    WorkerOptions
	node *lease.Node

	// resume is the due time the next queue scan starts from, lastFull when the last scan
	// from the start ran (both used by the loop goroutine only).
	resume   int64
	lastFull time.Time

	mu       sync.Mutex
	inflight map[string]bool // delivery ulids and order groups being attempted
	busy     int
	again    chan struct{}

	// cancel ends the loop (no more claims), which closes looped; abort cuts the attempts in
	// flight short.
	cancel, abort context.CancelFunc
	looped        chan struct{}
	wg            sync.WaitGroup

	// failing is set while the queue scans fail (Healthy).
	failing atomic.Bool
}

// ErrWorkerFailing is what Healthy answers while the worker cannot scan its queue.
var ErrWorkerFailing = errors.New("webhooks: the delivery worker cannot read its queue")

// Healthy reports ErrWorkerFailing while the last queue scan failed (the store refuses it:
// nothing is delivered), nil once one succeeds again (/readyz answers 503 meanwhile). The
// cause is in the log.
func (w *Worker) Healthy() error {
	if w.failing.Load() {
		return ErrWorkerFailing
	}
	return nil
}

// NewWorker returns the delivery worker of s; it starts nothing.
func (s *Service) NewWorker(o WorkerOptions) *Worker {
	if o.Concurrency <= 0 {
		o.Concurrency = 4
	}
	if o.PollInterval <= 0 {
		o.PollInterval = time.Second
	}
	if o.BaseBackoff <= 0 {
		o.BaseBackoff = BaseBackoff
	}
	if o.LeaseTTL <= 0 {
		o.LeaseTTL = s.egress.Timeout() + 30*time.Second
	}
	return &Worker{s: s, o: o, node: lease.NewNode(o.Node), inflight: map[string]bool{}, again: make(chan struct{}, 1),
		looped: make(chan struct{})}
}

// Start requeues the leases a stopped process left behind (every lease on a store of its
// own, this node's own on a shared one) and launches the delivery loop.
func (w *Worker) Start(ctx context.Context) error {
	if err := w.recover(ctx); err != nil {
		return err
	}
	attempts, abort := context.WithCancel(context.Background())
	ctx, cancel := context.WithCancel(attempts)
	w.cancel, w.abort = cancel, abort
	w.wg.Add(1)
	go w.loop(ctx, attempts)
	return nil
}

// releaseGrace bounds how long Stop, once its ctx ended, waits for the attempts it cut short
// to release their deliveries (one small transaction each).
const releaseGrace = 2 * time.Second

// Stop stops claiming and waits for the attempts in flight (each bounded by the egress
// timeout) to finish and record their outcome. When ctx ends first (the shutdown timeout), the
// attempts still in flight are cut short and release their deliveries, due again at once for
// another node or the next start; Stop then returns ctx's error. Stopping between a
// receiver's answer and its record would make another node send the delivery again, so Stop
// cuts nothing short before ctx ends.
func (w *Worker) Stop(ctx context.Context) error {
	if w.cancel == nil {
		return nil
	}
	w.cancel()
	done := make(chan struct{})
	go func() { w.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
	}
	w.abort()
	t := time.NewTimer(releaseGrace)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
	}
	return ctx.Err()
}

// loop scans the queue under ctx (ended by Stop) and runs the attempts under attempts (ended
// only when Stop's own ctx ends first).
func (w *Worker) loop(ctx, attempts context.Context) {
	defer w.wg.Done()
	defer close(w.looped)
	t := time.NewTimer(0)
	defer t.Stop()
	sweep := time.NewTicker(time.Hour)
	defer sweep.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-w.s.wake:
		case <-w.again:
		case <-sweep.C:
			if n, err := w.s.sweep(ctx, w.s.now().Add(-Retention)); err != nil && ctx.Err() == nil {
				w.s.log.Error("webhooks: sweeping the deliveries log failed", "err", err)
			} else if n > 0 {
				w.s.log.Info("webhooks: swept old attempts and ended deliveries", "count", n)
			}
		}
		err := w.dispatch(ctx, attempts)
		if err != nil && ctx.Err() == nil {
			w.s.log.Error("webhooks: scanning the queue failed", "err", err)
		}
		w.failing.Store(err != nil && ctx.Err() == nil)
		if !t.Stop() {
			select {
			case <-t.C:
			default:
			}
		}
		t.Reset(w.o.PollInterval)
	}
}

// The queue scan resumes from where the previous one left what was still pending, so the
// entries of ended deliveries (tombstones until compaction) are not walked again and again. New
// deliveries are due at their transaction's time, which precedes their commit by little:
// resumeMargin covers that, and a full scan every fullScanEvery covers anything else.
const (
	resumeMargin  = 5 * time.Second
	fullScanEvery = 30 * time.Second
)

// dispatch starts an attempt (under attempts) for each due delivery, while attempts are free,
// skipping those whose order group has an older pending delivery or one in flight.
func (w *Worker) dispatch(ctx, attempts context.Context) error {
	w.mu.Lock()
	free := w.o.Concurrency - w.busy
	w.mu.Unlock()
	if free <= 0 {
		return nil
	}
	claimed, err := w.next(ctx, free)
	for _, c := range claimed {
		w.run(attempts, c)
	}
	return err
}

// next scans the queue for up to free due deliveries and claims them.
func (w *Worker) next(ctx context.Context, free int) ([]claimedDelivery, error) {
	nowT := w.s.now()
	now := nowT.UnixNano()
	full := nowT.Sub(w.lastFull) > fullScanEvery
	prefix := store.Prefix(root, "q")
	o := store.IterOptions{Prefix: prefix, KeysOnly: true}
	if !full && w.resume > 0 {
		o.Start = append(bytes.Clone(prefix), fmt.Sprintf("%020d", w.resume)...)
	}
	// left is the due time of the first pending entry the scan did not pick; last that of the
	// last one it picked when it stopped for want of free attempts.
	var left, last int64
	keep := func(due int64) {
		if left == 0 {
			left = due
		}
	}
	var picked []Delivery
	err := w.s.db.View(ctx, func(txn *store.Txn) error {
		return txn.Iterate(o, func(k, _ []byte) (bool, error) {
			parts := strings.Split(string(k), string(store.Sep))
			if len(parts) != 6 {
				return true, nil
			}
			due, _ := strconv.ParseInt(parts[2], 10, 64)
			if due > now {
				keep(due)
				return false, nil
			}
			project, hook, u := parts[3], parts[4], parts[5]
			w.mu.Lock()
			busy := w.inflight[u]
			w.mu.Unlock()
			if busy {
				keep(due)
				return true, nil
			}
			raw, err := txn.Get(deliveryKey(project, hook, u))
			if err != nil {
				return true, nil // a stale queue entry; record() never leaves one, skip it
			}
			var d Delivery
			if err := json.Unmarshal(raw, &d); err != nil || d.Status != StatusPending {
				return true, nil
			}
			if d.Order != "" {
				g := group(d)
				w.mu.Lock()
				busy := w.inflight[g]
				w.mu.Unlock()
				if busy {
					keep(due)
					return true, nil
				}
				first, err := firstOf(txn, orderPrefix(project, hook, d.Order))
				if err != nil {
					return false, err
				}
				if first != u {
					keep(due)
					return true, nil // an older event of the same message goes first
				}
			}
			picked = append(picked, d)
			if len(picked) == free {
				last = due
				return false, nil
			}
			return true, nil
		})
	})
	if err != nil {
		return nil, err
	}
	next := now - int64(resumeMargin)
	if left > 0 && left < next {
		next = left
	}
	if last > 0 && last < next {
		next = last
	}
	w.resume = next
	if full {
		w.lastFull = nowT
	}
	return w.claim(ctx, picked, now)
}

// leaseKey is where the lease of a claimed delivery lives (a lease.Lease); while it is held,
// the delivery's queue entry sits at the lease's expiry (Delivery.Due), so the queue scan finds
// it again if it runs out.
func leaseKey(project, hook, u string) []byte { return store.Key(root, "l", project, hook, u) }

// claimedDelivery is a delivery this worker holds a lease on.
type claimedDelivery struct {
	d      Delivery
	holder string
}

// claim leases the picked deliveries in one Update, each only if it is still as the scan read
// it (pending, the same attempts and due time): the scan's snapshot may predate the commit of
// an attempt that ended meanwhile here or another node's claim. An expired lease is taken over.
func (w *Worker) claim(ctx context.Context, picked []Delivery, now int64) ([]claimedDelivery, error) {
	if len(picked) == 0 {
		return nil, nil
	}
	var out []claimedDelivery
	err := w.s.db.Update(ctx, func(txn *store.Txn) error {
		out = out[:0]
		for _, d := range picked {
			u := strings.TrimPrefix(d.ID, "msg_")
			raw, err := txn.Get(deliveryKey(d.Project, d.Webhook, u))
			if errors.Is(err, store.ErrNotFound) {
				continue
			}
			if err != nil {
				return err
			}
			var cur Delivery
			if err := json.Unmarshal(raw, &cur); err != nil {
				return err
			}
			if cur.Status != StatusPending || cur.Attempts != d.Attempts || cur.Due != d.Due || cur.Due > now {
				continue
			}
			lk := leaseKey(d.Project, d.Webhook, u)
			if l, ok, err := lease.Read(txn, lk); err != nil {
				return err
			} else if ok && !l.Expired(now) {
				continue
			}
			l := lease.Lease{Holder: w.node.Claim(), Until: now + int64(w.o.LeaseTTL)}
			prevDue := cur.Due
			cur.Due = l.Until
			if err := w.s.put(txn, &cur, prevDue); err != nil {
				return err
			}
			if err := lease.Write(txn, lk, l); err != nil {
				return err
			}
			out = append(out, claimedDelivery{d: cur, holder: l.Holder})
		}
		return nil
	})
	return out, err
}

// recover makes the deliveries leased by a previous run of this process due now.
func (w *Worker) recover(ctx context.Context) error {
	var keys [][]byte
	err := w.s.db.View(ctx, func(txn *store.Txn) error {
		return txn.Iterate(store.IterOptions{Prefix: store.Prefix(root, "l")}, func(k, v []byte) (bool, error) {
			l, _, err := lease.Decode(v)
			if err != nil || !w.o.Shared || l.Node() == w.node.ID() {
				keys = append(keys, bytes.Clone(k))
			}
			return true, nil
		})
	})
	if err != nil {
		return err
	}
	now := w.s.now().UnixNano()
	for _, k := range keys {
		parts := strings.Split(string(k), string(store.Sep))
		if len(parts) != 5 {
			continue
		}
		if err := w.s.db.Update(ctx, func(txn *store.Txn) error { return w.s.unlease(txn, parts[2], parts[3], parts[4], "", now) }); err != nil {
			return err
		}
	}
	return nil
}

// unlease removes the lease of a delivery (only holder's, unless holder is "") and makes a
// pending delivery due at due.
func (s *Service) unlease(txn *store.Txn, project, hook, u, holder string, due int64) error {
	lk := leaseKey(project, hook, u)
	l, ok, err := lease.Read(txn, lk)
	if err != nil || !ok || holder != "" && l.Holder != holder {
		return err
	}
	if err := txn.Delete(lk); err != nil {
		return err
	}
	raw, err := txn.Get(deliveryKey(project, hook, u))
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	var cur Delivery
	if err := json.Unmarshal(raw, &cur); err != nil {
		return err
	}
	if cur.Status != StatusPending {
		return nil
	}
	prevDue := cur.Due
	cur.Due = due
	return s.put(txn, &cur, prevDue)
}

// firstOf returns the last key part of the first key below prefix ("" when none).
func firstOf(txn *store.Txn, prefix []byte) (string, error) {
	first := ""
	err := txn.Iterate(store.IterOptions{Prefix: prefix, KeysOnly: true}, func(k, _ []byte) (bool, error) {
		first = store.LastPart(bytes.Clone(k))
		return false, nil
	})
	return first, err
}

func group(d Delivery) string { return "o\x00" + d.Project + "\x00" + d.Webhook + "\x00" + d.Order }

// run attempts c's delivery on its own goroutine, marking it (and its order group) in flight
// meanwhile.
func (w *Worker) run(ctx context.Context, c claimedDelivery) {
	d := c.d
	u := strings.TrimPrefix(d.ID, "msg_")
	w.mu.Lock()
	w.inflight[u] = true
	if d.Order != "" {
		w.inflight[group(d)] = true
	}
	w.busy++
	w.mu.Unlock()
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		if !w.s.attempt(ctx, d, c.holder, w.o.BaseBackoff) {
			// Cut short (the shutdown timeout) or the webhook unreadable: the delivery is due
			// again at once, for the next start or another node.
			err := w.s.db.Update(context.Background(), func(txn *store.Txn) error {
				return w.s.unlease(txn, d.Project, d.Webhook, u, c.holder, w.s.now().UnixNano())
			})
			if err != nil {
				w.s.log.Warn("webhooks: releasing a delivery failed; its lease will run out", "id", d.ID, "err", err)
			}
		}
		w.mu.Lock()
		delete(w.inflight, u)
		delete(w.inflight, group(d))
		w.busy--
		w.mu.Unlock()
		select {
		case w.again <- struct{}{}:
		default:
		}
	}()
}
