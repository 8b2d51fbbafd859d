package records

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/gatehouse-dev/gatehouse/edge/apierr"
	"github.com/gatehouse-dev/gatehouse/edge/store"
	"github.com/gatehouse-dev/gatehouse/index/fields"
	"github.com/gatehouse-dev/gatehouse/index/title"
)

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }

func jsonMarshal(v any) ([]byte, error) { return json.Marshal(v) }

func withProblems(err error, probs []problem) error {
	e := apierr.As(err)
	e.Details = e.Details[:0]
	for _, p := range probs {
		e.Details = append(e.Details, apierr.FieldProblem{Field: p.field, Problem: p.msg})
	}
	return e
}

// Start finishes the collection tasks a crash interrupted (tasks.go), brings the title index up
// to date (a new or incomplete index is rebuilt from the store; otherwise the journal of writes
// it may have missed is replayed), builds the compound indexes of a store written before they
// existed (once), and then starts the title worker. When Start returns, every write made before
// it is indexed: the service is ready. Queries by title (q) wait for it; the others do not need
// to.
func (s *Service) Start(ctx context.Context) error {
	if err := s.moveStripes(ctx); err != nil {
		return err
	}
	if err := s.claimStripe(ctx); err != nil {
		// Writes stay on the preferred stripe: counts are right, nodes may share a stripe.
		s.log.Warn("records: claiming a counter stripe failed", "err", err)
	}
	if err := s.runTasks(ctx); err != nil {
		// The store refused: the task stays recorded for the next apply or start.
		s.log.Error("records: collection tasks failed", "err", err)
	}
	if err := s.catchUp(ctx); err != nil {
		return err
	}
	s.caughtUpOnce.Do(func() { close(s.caughtUp) })
	s.lifeMu.Lock()
	defer s.lifeMu.Unlock()
	if s.titleStop == nil {
		s.titleStop, s.titleDone = make(chan struct{}), make(chan struct{})
		go s.titleWorker(s.titleStop, s.titleDone)
		if s.node != "" {
			s.claimWG.Add(1)
			go s.renewClaims(s.titleStop)
		}
	}
	return nil
}

// awaitTitles waits until Start brought the title index up to date.
func (s *Service) awaitTitles(ctx context.Context) error {
	select {
	case <-s.caughtUp:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Stop stops the title worker and indexes what the journal still holds (bounded by ctx; what
// is left is indexed by the next Start, the journal being durable).
func (s *Service) Stop(ctx context.Context) error {
	s.lifeMu.Lock()
	defer s.lifeMu.Unlock()
	if s.titleStop == nil {
		return nil
	}
	close(s.titleStop)
	s.claimWG.Wait() // renewClaims (counters.go) stops with the title worker
	select {
	case <-s.titleDone:
	case <-ctx.Done():
		return ctx.Err()
	}
	s.titleStop, s.titleDone = nil, nil
	if err := s.drainTitlesErr(ctx); err != nil {
		return err
	}
	return s.syncTitles(ctx)
}

// SyncTitles indexes every title journaled so far, now: when it returns, a record written
// before the call is found by q. The worker does the same within moments of each write; tests
// call this to await it.
func (s *Service) SyncTitles(ctx context.Context) error { return s.drainTitlesErr(ctx) }

// kickTitles wakes the title worker after a commit that journaled titles.
func (s *Service) kickTitles() {
	select {
	case s.titleKick <- struct{}{}:
	default:
	}
}

// titleWorker follows the title journal into the index: woken by each write, and every second
// in case a drain failed (an entry leaves the journal only once the index holds it). A drain
// that indexed entries is followed by a pause (titleGap), so that under load the writes of the
// pause make one index batch, not one each (bleve's cost per batch, a segment to build and
// later merge, is then spread over more entries); after a drain that found nothing new the
// next write is drained at once. On a shared store it pauses titleEvery after every drain,
// polls every followPoll for the other nodes' writes, and prunes the journal now and then
// (follow.go).
func (s *Service) titleWorker(stop <-chan struct{}, done chan<- struct{}) {
	defer close(done)
	every := time.Second
	if s.shared {
		every = followPoll
	}
	tick := time.NewTicker(every)
	defer tick.Stop()
	for ticks := 0; ; {
		full := false
		select {
		case <-stop:
			return
		case <-s.titleKick:
		case <-tick.C:
			ticks++
			full = ticks%60 == 0
		}
		began := time.Now()
		n, err := s.drainJournal(context.Background(), full)
		if err != nil {
			s.log.Error("records: update title index; retrying", "err", err)
		}
		s.titleFailing.Store(err != nil)
		if full && s.shared {
			if err := s.pruneJournal(context.Background()); err != nil {
				s.log.Warn("records: pruning the title journal failed; retrying later", "err", err)
			}
		}
		if n == 0 && err == nil && !s.shared {
			continue // nothing new: the next write is drained at once
		}
		select {
		case <-stop:
			return
		case <-time.After(s.titleGap(time.Since(began))):
		}
	}
}

// ErrTitlesFailing is what Healthy answers while the title worker cannot index.
var ErrTitlesFailing = errors.New("records: the title index cannot follow the writes")

// Healthy reports ErrTitlesFailing while the last drain of the title journal failed (the index or
// the store refuses it: queries by title miss the new writes), nil once one succeeds again
// (module.Healthy: /readyz answers 503 meanwhile). The cause is in the log.
func (s *Service) Healthy() error {
	if s.titleFailing.Load() {
		return ErrTitlesFailing
	}
	return nil
}

// titleLag bounds the time from a write's commit to the end of the drain that indexes it, in
// the steady state: the write waits for the end of the drain under way (took), the pause, and
// the next drain (about as long), so titleGap pauses titleLag less twice the last drain. What
// q promises (a record is found within 1 s) leaves room for a drain longer than the last.
const titleLag = 700 * time.Millisecond

// titleMinGap is the least pause after a drain that indexed entries.
const titleMinGap = 100 * time.Millisecond

// titleEvery is the pause between two drains of a shared store's journal (follow.go), whose
// node polls other nodes' writes at a steady pace.
const titleEvery = 400 * time.Millisecond

// titleGap is the pause after a drain that indexed entries and took took.
func (s *Service) titleGap(took time.Duration) time.Duration {
	if s.shared {
		return titleEvery
	}
	return max(titleLag-2*took, titleMinGap)
}

// catchUp is Start's work before the worker runs.
func (s *Service) catchUp(ctx context.Context) error {
	if s.shared {
		if err := s.catchUpShared(ctx); err != nil {
			return err
		}
		return s.buildCompound(ctx)
	}
	if s.titles.Fresh {
		if err := s.rebuildTitles(ctx); err != nil {
			return err
		}
	}
	if err := s.drainTitlesErr(ctx); err != nil {
		return err
	}
	return s.buildCompound(ctx)
}

func titleOf(r *record) string {
	if v := r.values(fieldTitle); len(v) == 1 {
		if t, err := fields.Decode(v[0]); err == nil {
			s, _ := t.(string)
			return s
		}
	}
	return ""
}

// createdMsOf is the record's createdAt in epoch milliseconds (0 when unreadable).
func createdMsOf(r *record) float64 {
	if v := r.values(fieldCreatedAt); len(v) == 1 {
		if t, err := fields.Decode(v[0]); err == nil {
			f, _ := t.(float64)
			return f
		}
	}
	return 0
}

// rebuildTitles indexes the title of every published record.
func (s *Service) rebuildTitles(ctx context.Context) error {
	s.titleMu.Lock()
	defer s.titleMu.Unlock()
	b := s.titles.NewBatch()
	commits := 0
	prefix := store.Prefix(root, "r")
	err := s.db.View(ctx, func(txn *store.Txn) error {
		return txn.Iterate(store.IterOptions{Prefix: prefix}, func(k, v []byte) (bool, error) {
			project, coll, id := cutPath(string(k[len(prefix):]))
			r, err := decodeRecord(id, v)
			if err != nil {
				return false, err
			}
			if r.published {
				if err := b.Put(project, coll, id, titleOf(r), createdMsOf(r)); err != nil {
					return false, err
				}
			}
			if b.Size() >= 5000 {
				if err := b.Commit(); err != nil {
					return false, err
				}
				if commits++; commits%titleBacklog == 0 {
					if err := s.titles.Sync(ctx); err != nil {
						return false, err
					}
				}
			}
			return ctx.Err() == nil, ctx.Err()
		})
	})
	if err != nil {
		return err
	}
	if err := b.Commit(); err != nil {
		return err
	}
	s.titles.Fresh = false
	return s.titles.MarkComplete()
}

// drainTitles replays the title journal into the index; failures are logged and retried by
// the next write or the next start.
func (s *Service) drainTitles(ctx context.Context) {
	if err := s.drainTitlesErr(ctx); err != nil {
		s.log.Error("records: update title index", "err", err)
	}
}

func (s *Service) drainTitlesErr(ctx context.Context) error {
	_, err := s.drainJournal(ctx, true)
	s.titleFailing.Store(err != nil)
	return err
}

// drainJournal moves journal entries into the title index, in chunks. The index makes each
// chunk searchable at once and durable a little later; an entry is deleted (through the
// store's committer, sharing the writers' commits) only once the index says it holds the
// entry's chunk durably (trimJournal, at the next drain), so a crash loses none: the next
// start indexes again what the journal still holds. Until then the entry is remembered as
// indexed and skipped. A full drain reads the journal from its start; otherwise it starts after
// the last entry the previous drain saw, which skips the deleted entries badger keeps until
// compaction (journal ids grow in commit order: the committer runs writes one after another;
// full drains, at start and every minute, catch an entry a wall clock stepping back would
// have put behind the resume point; they walk the deleted entries badger has not compacted
// away yet).
//
// An entry carries the version its write stored (journalEntry), and the drain indexes that,
// reading no record, wherever journal order is the order of the writes: entries are applied in
// key order, so the last write of a record wins. Where that order may not hold it indexes the
// record as the store holds it, as it does for entries of the earlier format: at the first
// drain of the process (what a crash left in the journal), for an entry behind the resume
// point (committed late, after a clock step back), and for a record's second entry in one
// drain (the two may be out of order, for the same reason).
func (s *Service) drainJournal(ctx context.Context, full bool) (indexed int, err error) {
	if s.shared {
		// Other nodes read the journal too (follow.go); the worker polls it at a steady pace.
		return 0, s.follow(ctx)
	}
	s.titleMu.Lock()
	defer s.titleMu.Unlock()
	if err := s.trimJournal(ctx); err != nil {
		return 0, err
	}
	first, resume := s.journalNext == nil, s.journalNext
	if full || first {
		s.journalNext = journalPrefix()
	}
	if s.indexed == nil {
		s.indexed = map[string]struct{}{}
	}
	// paths holds the records of the entries this drain indexed.
	paths := map[string]struct{}{}
	for chunks := 1; ; chunks++ {
		var keys [][]byte
		var last []byte
		n := 0
		b := s.titles.NewBatch()
		err := s.db.View(ctx, func(txn *store.Txn) error {
			keys, last, n = keys[:0], nil, 0
			return txn.Iterate(store.IterOptions{Prefix: journalPrefix(), Start: s.journalNext}, func(k, v []byte) (bool, error) {
				last = k
				if _, ok := s.indexed[string(k)]; ok {
					n++
					return n < journalChunk, nil
				}
				keys = append(keys, bytes.Clone(k))
				// A key holds the entries of one commit, in the order written (store.Txn.Journal).
				err := store.JournalEntries(v, func(ev []byte) error {
					n++
					e := parseJournalEntry(ev)
					// Past drainPaths records (a long catch-up) every entry reads its record.
					read := first || len(paths) >= drainPaths
					if !read {
						path := e.project + "/" + e.coll + "/" + e.id
						_, again := paths[path]
						paths[path] = struct{}{}
						read = again || bytes.Compare(k, resume) < 0
					}
					return indexEntry(txn, b, e, read)
				})
				return n < journalChunk, err
			})
		})
		if err != nil {
			return indexed, err
		}
		if n == 0 {
			return indexed, nil
		}
		next := append(bytes.Clone(last), 0)
		if len(keys) > 0 {
			b.OnDurable(func() {
				s.onDurable(func() {
					s.durMu.Lock()
					s.durable = append(s.durable, keys...)
					s.durMu.Unlock()
					s.kickTitles()
				})
			})
			if err := b.Commit(); err != nil {
				return indexed, err
			}
			indexed += len(keys)
			for _, k := range keys {
				s.indexed[string(k)] = struct{}{}
			}
		}
		s.journalNext = next
		if n < journalChunk {
			return indexed, nil
		}
		if chunks%titleBacklog == 0 {
			if err := s.titles.Sync(ctx); err != nil {
				return indexed, err
			}
		}
	}
}

// onDurable runs f, the drain's response to the index holding a batch durably, or hands it to
// a test that holds those notices back.
func (s *Service) onDurable(f func()) {
	if h := s.holdDurable.Load(); h != nil {
		(*h)(f)
		return
	}
	f()
}

// drainPaths bounds the records a drain remembers to tell a record's second entry.
const drainPaths = 100_000

// journalChunk bounds the journal entries one drain reads into one index batch.
const journalChunk = 5000

// titleBacklog bounds the full batches a drain or a rebuild commits before it waits until the
// index holds them durably: bleve keeps a batch in memory until its persister has written it,
// and a long run of batches (a rebuild, an import) must not outrun the persister unbounded.
const titleBacklog = 8

// trimJournal deletes the journal entries whose titles the index holds durably (under
// titleMu); on failure they stay listed for the next drain.
func (s *Service) trimJournal(ctx context.Context) error {
	s.durMu.Lock()
	keys := s.durable
	s.durable = nil
	s.durMu.Unlock()
	for len(keys) > 0 {
		chunk := keys[:min(len(keys), journalChunk)]
		err := s.db.Update(ctx, func(txn *store.Txn) error {
			for _, k := range chunk {
				if err := txn.Delete(k); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			s.durMu.Lock()
			s.durable = append(keys, s.durable...)
			s.durMu.Unlock()
			return err
		}
		for _, k := range chunk {
			delete(s.indexed, string(k))
		}
		keys = keys[len(chunk):]
	}
	return nil
}

// syncTitles makes everything indexed so far durable and deletes the journal entries it
// covers (Stop, and drops that must not be undone by a crash).
func (s *Service) syncTitles(ctx context.Context) error {
	if err := s.titles.Sync(ctx); err != nil {
		return err
	}
	if s.shared {
		return nil
	}
	s.titleMu.Lock()
	defer s.titleMu.Unlock()
	return s.trimJournal(ctx)
}

// indexEntry queues in b what a title journal entry asks: the record's document as the entry
// carries it, or, with read or for an entry of the earlier format, as the store holds the
// record now (none when it is gone or unpublished), and the deletion of the document an earlier
// version was indexed with when its createdAt differs (journalEntry).
func indexEntry(txn *store.Txn, b *title.Batch, e journalRec, read bool) error {
	published, ms, t := e.indexed, e.createdMs, e.title
	if read || !e.carried {
		r, err := getRecord(txn, e.project, e.coll, e.id)
		if err != nil {
			return err
		}
		published, ms, t = r != nil && r.published, 0, ""
		if published {
			ms, t = createdMsOf(r), titleOf(r)
		}
	}
	if e.hasPrev && (!published || ms != e.prevMs) {
		b.Delete(e.project, e.coll, e.id, e.prevMs)
	}
	if !published {
		return nil
	}
	return b.Put(e.project, e.coll, e.id, t, ms)
}

// deletePrefix removes every key below prefix, in batches.
func (s *Service) deletePrefix(ctx context.Context, prefix []byte) error {
	wb := s.db.NewBatch()
	err := s.db.View(ctx, func(txn *store.Txn) error {
		return txn.Iterate(store.IterOptions{Prefix: prefix, KeysOnly: true}, func(k, _ []byte) (bool, error) {
			return true, wb.Delete(bytes.Clone(k))
		})
	})
	if err != nil {
		wb.Cancel()
		return err
	}
	return wb.Flush()
}

// dropCounters removes a collection's counters: per-value ones, stripes and count.
func (s *Service) dropCounters(ctx context.Context, project, coll string) error {
	for _, p := range append(groupStripePrefixes(project, coll), groupCollPrefix(project, coll)) {
		if err := s.deletePrefix(ctx, p); err != nil {
			return err
		}
	}
	return s.db.Update(ctx, func(txn *store.Txn) error { return dropCounters(txn, s.writeStripe(), project, coll) })
}

// dropCollection removes a deleted collection's records, indexes, counter and titles.
func (s *Service) dropCollection(ctx context.Context, project, coll string) error {
	defer s.invalidate(nil)
	s.titleMu.Lock()
	b := s.titles.NewBatch()
	err := b.DeleteCollection(project, coll)
	if err == nil {
		err = s.deletePrefix(ctx, recPrefix(project, coll))
	}
	if err == nil {
		err = b.Commit()
	}
	s.titleMu.Unlock()
	if err == nil {
		// The task that runs this ends with it: the titles' removal must not be lost to a crash.
		err = s.titles.Sync(ctx)
	}
	if err != nil {
		return err
	}
	if err := s.deletePrefix(ctx, idxCollPrefix(project, coll)); err != nil {
		return err
	}
	if err := s.deletePrefix(ctx, compoundCollPrefix(project, coll)); err != nil {
		return err
	}
	if err := s.dropCounters(ctx, project, coll); err != nil {
		return err
	}
	// A rebuild the drop interrupted must not leave a collection made again under the name
	// unindexed.
	return s.db.Update(ctx, func(txn *store.Txn) error { return txn.Delete(rebuildKey(project, coll)) })
}

// dropTitles removes a collection's titles from this node's title index only (another node
// deleted the collection and its data in the shared store).
func (s *Service) dropTitles(project, coll string) error {
	s.titleMu.Lock()
	defer s.titleMu.Unlock()
	b := s.titles.NewBatch()
	if err := b.DeleteCollection(project, coll); err != nil {
		return err
	}
	return b.Commit()
}

// rebuildKey holds, while a collection's rebuild runs, the id of the last record it rebuilt
// (empty before the first): the records up to it have their index entries and counts under
// the collection's new fields, and writes keep them; the later ones are left to the rebuild
// (txWriter.derived), which indexes and counts each as it finds it stored, so that a record
// written during the rebuild is counted once, and one deleted before the rebuild reached it
// not at all.
func rebuildKey(project, coll string) []byte { return store.Key(root, "b", project, coll) }

// rebuildChunk bounds the records one transaction of a rebuild re-derives.
const rebuildChunk = 500

// rebuildCollection re-derives every stored record of a collection after its fields changed:
// projections, index entries and the counter. Queries during the rebuild may miss records.
func (s *Service) rebuildCollection(ctx context.Context, project, coll string) error {
	defer s.invalidate(nil)
	sch, err := s.Schema(ctx, project, coll)
	if err != nil {
		return err
	}
	err = s.db.Update(ctx, func(txn *store.Txn) error { return txn.Set(rebuildKey(project, coll), nil) })
	if err != nil {
		return err
	}
	if err := s.deletePrefix(ctx, idxCollPrefix(project, coll)); err != nil {
		return err
	}
	if err := s.deletePrefix(ctx, compoundCollPrefix(project, coll)); err != nil {
		return err
	}
	if err := s.dropCounters(ctx, project, coll); err != nil {
		return err
	}
	start := recPrefix(project, coll)
	for start != nil {
		if h := s.rebuildRead.Load(); h != nil {
			(*h)()
		}
		var next []byte
		err = s.db.Update(ctx, func(txn *store.Txn) error {
			next = nil
			// The versions stored now, read in the transaction that re-derives them: a write
			// before it is rebuilt here, one after it finds the record past rebuildKey.
			var recs []*record
			err := txn.Iterate(store.IterOptions{Prefix: recPrefix(project, coll), Start: start}, func(k, v []byte) (bool, error) {
				r, err := decodeRecord(store.LastPart(k), v)
				if err != nil {
					return false, err
				}
				recs = append(recs, r)
				return len(recs) < rebuildChunk, nil
			})
			if err != nil {
				return err
			}
			w := s.txWriter(txn)
			for _, old := range recs {
				c, u := old.times()
				rec := buildRecord(sch, old.id, old.published, old.data(), c, u)
				if err := txn.Set(recKey(project, coll, old.id), encodeRecord(rec)); err != nil {
					return err
				}
				if rec.published {
					if err := w.add(indexOf(project, coll, sch, rec)); err != nil {
						return err
					}
				}
				if err := w.journal(project, coll, old.id, old, rec); err != nil {
					return err
				}
			}
			if err := w.flush(); err != nil {
				return err
			}
			if len(recs) < rebuildChunk {
				return txn.Delete(rebuildKey(project, coll)) // the last chunk: writes index again
			}
			last := recs[len(recs)-1].id
			next = append(recKey(project, coll, last), 0)
			return txn.Set(rebuildKey(project, coll), []byte(last))
		})
		if err != nil {
			return err
		}
		start = next
	}
	return nil
}
