package files

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/gatehouse-dev/gatehouse/edge/store"
)

// Sweep removes pending assets whose deadline has passed at now: slots never uploaded once
// their URL expired, and uploaded slots never completed CompleteGrace after that. Their
// objects are deleted too. It returns how many assets were removed.
func (s *Service) Sweep(ctx context.Context, now time.Time) (int, error) {
	type due struct {
		key []byte
		id  string
	}
	var list []due
	limit := fmt.Sprintf("%013d", now.UnixMilli())
	err := s.o.DB.View(ctx, func(txn *store.Txn) error {
		return txn.Iterate(store.IterOptions{Prefix: sweepPrefix(), KeysOnly: true}, func(k, _ []byte) (bool, error) {
			rest := strings.TrimPrefix(string(k), string(sweepPrefix()))
			ms, id, ok := strings.Cut(rest, string(store.Sep))
			if !ok {
				return true, nil
			}
			if ms > limit {
				return false, nil
			}
			list = append(list, due{key: append([]byte(nil), k...), id: id})
			return len(list) < 1000, nil
		})
	})
	if err != nil {
		return 0, err
	}
	removed := 0
	for _, d := range list {
		var gone *Asset
		err := s.o.DB.Update(ctx, func(txn *store.Txn) error {
			a, err := getAsset(txn, d.id)
			if err != nil || a.Status != StatusPending {
				return txn.Delete(d.key) // a stale queue entry
			}
			if a.Sweep.After(now) {
				return nil
			}
			if a.Receiving && now.Before(a.Sweep.Add(10*time.Minute)) {
				return nil // an upload that started before expiry may still be streaming
			}
			gone = a
			return deleteAsset(txn, a)
		})
		if err != nil {
			return removed, err
		}
		if gone != nil {
			removed++
			s.m.swept.Inc()
			if err := s.o.Blobs.Delete(ctx, gone.StorageKey); err != nil {
				s.log.Warn("files: sweeping an object", "asset", gone.ID, "err", err)
			}
		}
	}
	return removed, nil
}

// Sweeper runs Service.Sweep every Interval in the background (a component with Start/Stop).
type Sweeper struct {
	svc      *Service
	interval time.Duration
	mu       sync.Mutex
	cancel   context.CancelFunc
	done     chan struct{}
}

// SweeperOptions configures NewSweeper, as WorkerOptions configure the other products' workers.
type SweeperOptions struct {
	// Interval is the time between two sweeps (a minute when <= 0).
	Interval time.Duration
}

// NewSweeper returns the sweeper of s; it starts nothing (Start runs it).
func (s *Service) NewSweeper(o SweeperOptions) *Sweeper {
	if o.Interval <= 0 {
		o.Interval = time.Minute
	}
	return &Sweeper{svc: s, interval: o.Interval}
}

// Start launches the sweeping loop; it returns at once.
func (w *Sweeper) Start(ctx context.Context) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.cancel != nil {
		return nil
	}
	ctx, w.cancel = context.WithCancel(context.WithoutCancel(ctx))
	w.done = make(chan struct{})
	go func() {
		defer close(w.done)
		t := time.NewTicker(w.interval)
		defer t.Stop()
		for {
			if n, err := w.svc.Sweep(ctx, w.svc.now()); err != nil && ctx.Err() == nil {
				w.svc.log.Warn("files: sweep", "err", err)
			} else if n > 0 {
				w.svc.log.Info("files: swept expired uploads", "removed", n)
			}
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	return nil
}

// Stop ends the loop and waits for a sweep in progress, or until ctx ends.
func (w *Sweeper) Stop(ctx context.Context) error {
	w.mu.Lock()
	cancel, done := w.cancel, w.done
	w.cancel = nil
	w.mu.Unlock()
	if cancel == nil {
		return nil
	}
	cancel()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
