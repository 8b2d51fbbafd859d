package webhooks

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

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
}

// Worker delivers the pending deliveries: at least once, retried with backoff, in order per
// order key. Start launches it and Stop ends it; a delivery cut short by Stop stays due and
// is attempted again after the restart.
type Worker struct {
	s *Service
	o WorkerOptions

	// resume is the due time the next queue scan starts from, lastFull when the last scan
	// from the start ran (both used by the loop goroutine only).
	resume   int64
	lastFull time.Time

	mu       sync.Mutex
	inflight map[string]bool // delivery ulids and order groups being attempted
	busy     int
	again    chan struct{}

	cancel context.CancelFunc
	wg     sync.WaitGroup
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
	return &Worker{s: s, o: o, inflight: map[string]bool{}, again: make(chan struct{}, 1)}
}

// Start launches the delivery loop.
func (w *Worker) Start(context.Context) error {
	ctx, cancel := context.WithCancel(context.Background())
	w.cancel = cancel
	w.wg.Add(1)
	go w.loop(ctx)
	return nil
}

// Stop ends the loop and waits for the attempts in flight (each bounded by the egress
// timeout), or for ctx.
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
		return ctx.Err()
	}
}

func (w *Worker) loop(ctx context.Context) {
	defer w.wg.Done()
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
		if err := w.dispatch(ctx); err != nil && ctx.Err() == nil {
			w.s.log.Error("webhooks: scanning the queue failed", "err", err)
		}
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

// dispatch starts an attempt for each due delivery, while attempts are free, skipping those
// whose order group has an older pending delivery or one in flight.
func (w *Worker) dispatch(ctx context.Context) error {
	w.mu.Lock()
	free := w.o.Concurrency - w.busy
	w.mu.Unlock()
	if free <= 0 {
		return nil
	}
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
		return err
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
	for _, d := range picked {
		w.run(ctx, d)
	}
	return nil
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

// run attempts d on its own goroutine, marking it (and its order group) in flight meanwhile.
func (w *Worker) run(ctx context.Context, d Delivery) {
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
		if w.s.current(ctx, d) {
			w.s.attempt(ctx, d, w.o.BaseBackoff)
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

// current reports whether d, as a queue scan read it, is still the delivery's state: pending,
// with no attempt recorded since. The scan reads a snapshot that may predate the commit of an
// attempt that ended while it ran (the attempt leaves inflight only after its commit, so a read
// begun now sees it); such a delivery is not sent again. A delivery that cannot be read is
// left for the next scan.
func (s *Service) current(ctx context.Context, d Delivery) bool {
	var cur Delivery
	err := s.db.View(ctx, func(txn *store.Txn) error {
		raw, err := txn.Get(deliveryKey(d.Project, d.Webhook, strings.TrimPrefix(d.ID, "msg_")))
		if err != nil {
			return err
		}
		return json.Unmarshal(raw, &cur)
	})
	return err == nil && cur.Status == StatusPending && cur.Attempts == d.Attempts
}
