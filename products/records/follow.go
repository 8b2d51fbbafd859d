package records

import (
	"bytes"
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/oklog/ulid/v2"

	"github.com/gatehouse-dev/gatehouse/edge/store"
)

// On a shared store (many gateway nodes on one database) every node keeps its own title index
// in its own data folder, and every node must index every node's writes. The title journal is
// then read by all, deleted by none: each node follows it from a mark kept in its index (in
// the same bleve commit as the titles it indexed, so a restart resumes where the index is),
// and journal entries older than the retention are pruned by time. A node whose mark is older
// than the retention (down too long: entries it never read may be gone) rebuilds its index
// from the records.
//
// Journal ids are time-ordered but, written by many nodes and concurrent transactions, they do
// not arrive in id order: an entry may commit a little after entries with later ids. So the
// follower reads from its mark, keeps the mark followLookback behind the present, and remembers the entries it indexed since the mark (seen) to skip them when it
// reads them again; an entry committed later than followLookback after its id's time (a
// commit stalled that long, or a node's clock that far behind) is missed until a rebuild.
const (
	// followLookback is how far behind the present the mark stays.
	followLookback = 5 * time.Second
	// followPoll is how often the title worker reads the journal for other nodes' writes: a
	// record written on another node is found by q here within followPoll plus titleEvery.
	followPoll = 500 * time.Millisecond
	// DefaultJournalRetention is how long a shared store keeps title journal entries.
	DefaultJournalRetention = time.Hour
	// followChunk bounds the entries one index batch takes.
	followChunk = 5000
	// markEvery is the least time between two writes of a mark that only moved.
	markEvery = 30 * time.Second
)

// follower is the place of this node's title index in the shared journal (under titleMu).
type follower struct {
	// low is the mark (unix milliseconds): every entry with an earlier id is indexed.
	low int64
	// saved is the mark last written to the index.
	saved int64
	// seen holds the entries at or after low already indexed, with their id's time.
	seen map[string]int64
}

// journalAt is the first journal key at or after time ms.
func journalAt(ms int64) []byte {
	var id ulid.ULID
	_ = id.SetTime(uint64(max(ms, 0)))
	return append(journalPrefix(), strings.ToLower(id.String()[:10])...)
}

// journalTime is the time (unix milliseconds) of a journal key's id, -1 when unreadable.
func journalTime(k []byte) int64 {
	id, err := ulid.ParseStrict(strings.ToUpper(store.LastPart(k)))
	if err != nil {
		return -1
	}
	return int64(id.Time())
}

// catchUpShared is Start's title work on a shared store: resume from the index's mark, or
// rebuild the index when it is new or its mark is older than the retention.
func (s *Service) catchUpShared(ctx context.Context) error {
	raw, err := s.titles.Mark()
	if err != nil {
		return err
	}
	low, perr := strconv.ParseInt(string(raw), 10, 64)
	now := s.jnow()
	if s.titles.Fresh || raw == nil || perr != nil || low < now.Add(-s.retention+followLookback).UnixMilli() {
		if !s.titles.Fresh {
			s.log.Info("records: the title index is older than the journal's retention; rebuilding it")
			if err := s.titles.Clear(); err != nil {
				return err
			}
		}
		// Writes during the rebuild are journaled after this mark and indexed again by follow.
		low = now.Add(-followLookback).UnixMilli()
		if err := s.rebuildTitles(ctx); err != nil {
			return err
		}
	}
	s.titleMu.Lock()
	s.fol = follower{low: low, seen: map[string]int64{}}
	s.titleMu.Unlock()
	return s.follow(ctx)
}

// follow indexes the journal entries this node has not indexed yet, then moves its mark.
func (s *Service) follow(ctx context.Context) error {
	s.titleMu.Lock()
	defer s.titleMu.Unlock()
	if s.fol.seen == nil {
		s.fol.seen = map[string]int64{}
	}
	// Entries with ids before now−followLookback have committed by the end of this read.
	low := max(s.fol.low, s.jnow().Add(-followLookback).UnixMilli())
	start := journalAt(s.fol.low)
	for {
		var keys []string
		n := 0
		b := s.titles.NewBatch()
		err := s.db.View(ctx, func(txn *store.Txn) error {
			keys, n = keys[:0], 0
			return txn.Iterate(store.IterOptions{Prefix: journalPrefix(), Start: start}, func(k, v []byte) (bool, error) {
				start = append(bytes.Clone(k), 0)
				if _, ok := s.fol.seen[string(k)]; ok {
					n++
					return n < followChunk, nil
				}
				keys = append(keys, string(k))
				// A key holds the entries of one commit (store.Txn.Journal). Other nodes'
				// entries arrive out of order: index the record as the store holds it.
				err := store.JournalEntries(v, func(ev []byte) error {
					n++
					return indexEntry(txn, b, parseJournalEntry(ev), true)
				})
				return n < followChunk, err
			})
		})
		if err != nil {
			return err
		}
		last := n < followChunk
		mark := last && (len(keys) > 0 || low-s.fol.saved >= markEvery.Milliseconds())
		if mark {
			b.SetMark([]byte(strconv.FormatInt(low, 10)))
		}
		if err := b.Commit(); err != nil {
			return err
		}
		for _, k := range keys {
			s.fol.seen[k] = journalTime([]byte(k))
		}
		if mark {
			s.fol.saved = low
		}
		if last {
			break
		}
	}
	s.fol.low = low
	for k, t := range s.fol.seen {
		if t < low {
			delete(s.fol.seen, k)
		}
	}
	s.folSeen.Store(int64(len(s.fol.seen)))
	return nil
}

// pruneJournal deletes the journal entries older than the retention (any node may; deleting
// twice is harmless).
func (s *Service) pruneJournal(ctx context.Context) error {
	end := journalAt(s.jnow().Add(-s.retention).UnixMilli())
	for {
		var doomed [][]byte
		err := s.db.View(ctx, func(txn *store.Txn) error {
			return txn.Iterate(store.IterOptions{Prefix: journalPrefix(), KeysOnly: true}, func(k, _ []byte) (bool, error) {
				if bytes.Compare(k, end) >= 0 {
					return false, nil
				}
				doomed = append(doomed, bytes.Clone(k))
				return len(doomed) < 1000, nil
			})
		})
		if err != nil || len(doomed) == 0 {
			return err
		}
		err = s.db.Update(ctx, func(txn *store.Txn) error {
			for _, k := range doomed {
				if err := txn.Delete(k); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil || len(doomed) < 1000 {
			return err
		}
	}
}
