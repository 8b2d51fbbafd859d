package forms

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/gatehouse-dev/gatehouse/edge/blob"
	"github.com/gatehouse-dev/gatehouse/edge/store"
)

// A submission's files are stored before the submission commits and removed again when it
// fails. A crash between the two, or a blob store lost between two files of one submission
// (the first cannot be removed then either), leaves files that no submission names: the
// sweep removes them. A submission's id is a UUID version 7, so its files' keys say when it
// began; files of submissions begun more than OrphanAge ago whose submission is not in the
// store are orphans (a submission still in flight is far younger).
const (
	// OrphanAge is how old a submission's files must be before the sweep may remove them.
	OrphanAge = time.Hour
	// orphanSweepFirst and orphanSweepEvery pace the sweep Start runs: a minute after the
	// start, then hourly. Every node sweeps; deletes are idempotent.
	orphanSweepFirst = time.Minute
	orphanSweepEvery = time.Hour
)

// blobLister is a blob store that lists its objects (both of edge/blob's do).
type blobLister interface {
	List(ctx context.Context, fn func(key string, size int64) error) error
}

// SweepOrphans removes the files of submissions begun more than olderThan ago (by the wall
// clock, which dates the ids) that are not in the store, and returns how many it removed. A
// blob store that cannot list its objects is not swept.
func (s *Service) SweepOrphans(ctx context.Context, olderThan time.Duration) (int, error) {
	l, ok := s.o.Blobs.(blobLister)
	if !ok {
		return 0, nil
	}
	cutoff := time.Now().Add(-olderThan)
	var (
		orphans []string
		lastSub string // the files of one submission are listed together (key order)
		lastOK  bool   // whether lastSub is stored
	)
	err := l.List(ctx, func(key string, _ int64) error {
		project, slug, id, ok := parseBlobKey(key)
		if !ok || !begunBefore(id, cutoff) {
			return nil
		}
		if sub := project + "/" + slug + "/" + id; sub != lastSub {
			err := s.o.DB.View(ctx, func(tx *store.Txn) error {
				var err error
				lastOK, err = tx.Has(subKey(project, slug, id))
				return err
			})
			if err != nil {
				return err
			}
			lastSub = sub
		}
		if !lastOK {
			orphans = append(orphans, key)
		}
		return nil
	})
	removed := 0
	for _, key := range orphans {
		if derr := s.o.Blobs.Delete(ctx, key); derr != nil && !errors.Is(derr, blob.ErrNotFound) {
			err = errors.Join(err, derr)
			continue
		}
		removed++
	}
	return removed, err
}

// parseBlobKey splits a key blobKey made; ok is false for any other key.
func parseBlobKey(key string) (project, slug, id string, ok bool) {
	parts := strings.Split(key, "/")
	if len(parts) != 5 || parts[0] != "forms" {
		return "", "", "", false
	}
	return parts[1], parts[2], parts[3], true
}

// begunBefore reports whether id is a UUID version 7 dated before cutoff.
func begunBefore(id string, cutoff time.Time) bool {
	u, err := uuid.Parse(id)
	if err != nil || u.Version() != 7 {
		return false
	}
	sec, nsec := u.Time().UnixTime()
	return time.Unix(sec, nsec).Before(cutoff)
}

// sweepLoop sweeps a minute after the start, then hourly, until ctx ends.
func (s *Service) sweepLoop(ctx context.Context) {
	t := time.NewTimer(orphanSweepFirst)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		n, err := s.SweepOrphans(ctx, OrphanAge)
		if n > 0 {
			s.log.Info("removed the files of submissions never stored", "files", n)
		}
		if err != nil && ctx.Err() == nil {
			s.log.Warn("sweeping the files of submissions never stored", "removed", n, "err", err)
		}
		t.Reset(orphanSweepEvery)
	}
}
