package records

import (
	"bytes"
	"context"
	"encoding/json"
	"strconv"
	"sync"
	"time"

	"github.com/gatehouse-dev/gatehouse/edge/store"
)

// PruneJournalForTest prunes the title journal now, as the title worker does now and then.
func PruneJournalForTest(s *Service) error { return s.pruneJournal(context.Background()) }

// SetJournalClockForTest sets the clock the journal follower and the pruning read (the wall
// clock of journal ids by default).
func SetJournalClockForTest(s *Service, now func() time.Time) { s.jnow = now }

// CrashAfterApplyForTest writes what an apply's transaction writes when it changes a
// collection's definition (def) or deletes it (def nil), the definition and the collection
// task, without running the task after the commit: as when the process died right after it.
func CrashAfterApplyForTest(s *Service, project string, name string, def *Collection) error {
	return s.db.Update(context.Background(), func(txn *store.Txn) error {
		if def == nil {
			if err := txn.Delete(collKey(project, name)); err != nil {
				return err
			}
		} else {
			raw, err := json.Marshal(def)
			if err != nil {
				return err
			}
			if err := txn.Set(collKey(project, name), raw); err != nil {
				return err
			}
		}
		return recordTask(txn, project, name)
	})
}

// StoredForTest counts the keys a collection holds in the store (records, index entries)
// and the collection tasks recorded.
func StoredForTest(s *Service, project, coll string) (recs, idx, tasks int, err error) {
	count := func(txn *store.Txn, p []byte) (int, error) {
		n := 0
		err := txn.Iterate(store.IterOptions{Prefix: p, KeysOnly: true}, func(_, _ []byte) (bool, error) { n++; return true, nil })
		return n, err
	}
	err = s.db.View(context.Background(), func(txn *store.Txn) error {
		var err error
		if recs, err = count(txn, recPrefix(project, coll)); err != nil {
			return err
		}
		if idx, err = count(txn, idxCollPrefix(project, coll)); err != nil {
			return err
		}
		tasks, err = count(txn, taskRoot)
		return err
	})
	return recs, idx, tasks, err
}

// HoldTitleDurabilityForTest holds back the title index's durability notices to the journal
// drain, as if the index had not written its batches yet, until release runs them.
func HoldTitleDurabilityForTest(s *Service) (release func()) {
	var mu sync.Mutex
	var held []func()
	hold := func(f func()) {
		mu.Lock()
		held = append(held, f)
		mu.Unlock()
	}
	s.holdDurable.Store(&hold)
	return func() {
		s.holdDurable.Store(nil)
		mu.Lock()
		fs := held
		held = nil
		mu.Unlock()
		for _, f := range fs {
			f()
		}
	}
}

// JournalForTest returns the title journal's entries in key order.
func JournalForTest(s *Service) (keys, vals [][]byte, err error) {
	err = s.db.View(context.Background(), func(txn *store.Txn) error {
		return txn.Iterate(store.IterOptions{Prefix: journalPrefix()}, func(k, v []byte) (bool, error) {
			keys, vals = append(keys, bytes.Clone(k)), append(vals, bytes.Clone(v))
			return true, nil
		})
	})
	return keys, vals, err
}

// LegacyJournalForTest rewrites every title journal entry in the format of the versions before
// entries carried their record's version: the record's path, then, when the write replaced a
// version, a 0 byte and that version's createdAt.
func LegacyJournalForTest(s *Service) error {
	keys, vals, err := JournalForTest(s)
	if err != nil {
		return err
	}
	// Each entry gets a key of its own, as those versions wrote them, in the journal's order.
	return s.db.Update(context.Background(), func(txn *store.Txn) error {
		for i, k := range keys {
			if err := txn.Delete(k); err != nil {
				return err
			}
			err := store.JournalEntries(vals[i], func(ev []byte) error {
				e := parseJournalEntry(ev)
				v := bytes.Clone(ev)
				if e.carried {
					v = []byte(e.project + "/" + e.coll + "/" + e.id)
					if e.hasPrev {
						v = strconv.AppendFloat(append(v, 0), e.prevMs, 'f', -1, 64)
					}
				}
				return txn.Set(append(journalPrefix(), store.NewID()...), v)
			})
			if err != nil {
				return err
			}
		}
		return nil
	})
}

// DrainTitlesForTest runs one drain of the title journal as the worker does (full: from the
// journal's start, else from where the last drain stopped).
func DrainTitlesForTest(s *Service, full bool) error {
	_, err := s.drainJournal(context.Background(), full)
	return err
}

// RewriteJournalForTest replaces the title journal's entries by what edit makes of them (keys
// and values in key order), as writes whose journal ids came out of order would have left it.
func RewriteJournalForTest(s *Service, edit func(keys, vals [][]byte) ([][]byte, [][]byte)) error {
	keys, vals, err := JournalForTest(s)
	if err != nil {
		return err
	}
	nk, nv := edit(keys, vals)
	return s.db.Update(context.Background(), func(txn *store.Txn) error {
		for _, k := range keys {
			if err := txn.Delete(k); err != nil {
				return err
			}
		}
		for i, k := range nk {
			if err := txn.Set(k, nv[i]); err != nil {
				return err
			}
		}
		return nil
	})
}

// RebuildForTest rebuilds collection project/coll as a fields change's task does, running
// between before the transaction of each chunk of records.
func RebuildForTest(s *Service, project, coll string, between func()) error {
	s.rebuildRead.Store(&between)
	defer s.rebuildRead.Store(nil)
	return s.rebuildCollection(context.Background(), project, coll)
}
