package store

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	badger "github.com/dgraph-io/badger/v4"
	"github.com/dgraph-io/ristretto/v2"
)

// badgerEngine is the embedded backend: one badger database and its group committer.
type badgerEngine struct {
	bdb *badger.DB
	c   *committer
	// closed makes a second Close a no-op.
	closed bool
	// gcStop ends the value log collector, gcDone says it has.
	gcStop, gcDone chan struct{}
}

var _ engine = (*badgerEngine)(nil)

// baseLevelMB is the target size of the LSM tree's base level, the level memtable flushes
// (level 0) are compacted into, in MB (badger's default: 10). Badger gives each level a tenth
// of the next one's size, at least this much, takes as base the deepest level whose target is
// within it, and compacts a level into the next when it outgrows its target; writes touch
// the whole key range (a record create writes 17 keys all over it), so each such compaction
// rewrites most of the next level. With 10 MB, a store of 60 MB rewrote its last level for
// every 10 MB flushed; with 32 MB, for every 32. Measured with bench-records-writes (records
// phase, alternated; the runs are in the git history of docs/performance.md, 2026-11-28): 6% less CPU per create counting the compactions it
// causes over 10 s, 10-14% over 30 s, with the same p99 over 10 s. 64 MB (the last level itself
// becomes the base of a store under 64 MB, rewritten whole by every level-0 compaction) cost the
// same CPU over 10 s and doubled the p99.
const baseLevelMB = 32

// Table sizes bound what compactions hold. A compaction builds up to 8 + its key-range splits
// tables at once (badger's fixed throttle), each builder holding twice its table's size plus
// the compressed copies of its blocks, and two compactors run (badger's least). With badger's
// defaults (2 MB base tables, doubled at each level past the base) the deepest levels' tables
// of a million records reached 8-16 MB and the builders held 269 MB during the import
// (docs/performance.md, Footprint). So every level's tables stay at one size (multiplier 1),
// and that size is 1 MB: the bytes compacted are the same, in more, smaller files (about one
// per MB of store; the Go runtime raises the open-files limit to its hard limit at start).
const (
	baseTableMB         = 1
	tableSizeMultiplier = 1
)

// blockKB is the size of a table's blocks (badger's default: 4 KB). Badger reads a table's
// index (the first key of every block) and its bloom filter in place, through the table's
// memory map, on every lookup: at a million records with 4 KB blocks the indexes held 38 MB
// and the bloom filters 14 MB, pages that random reads keep mapped (file-backed RSS). With
// 16 KB blocks the index is a quarter as large, and a lookup that misses the block cache
// decompresses 16 KB instead of 4. Measured with make bench-footprint at 1M records
// (docs/performance.md, Footprint): mix (d) one record 70 -> 212 req/s, (e) 1,101 -> 2,693,
// (a) and (b) a tenth faster, (c) populated lists 111 -> 70 req/s under a heavier load, the
// file-backed RSS of mix (c) 220 -> 174 MB.
const blockKB = 16

// badgerValueThreshold is the length from which badger keeps a value in its value log and
// only a pointer to it in the tree (badger's default: 1 MB). A transaction holds about 15% of
// a memtable counting values in the tree (2.4 MB with 16 MB memtables), and a record's write
// stores its body more than once (the record, its journal entry): with 1 MB the largest
// record the interface takes (a 1 MB JSON body) made a 3.1 MB transaction and failed with 500. Past 64 KB a value goes to the value log, which the engine
// garbage-collects (gcEvery).
const badgerValueThreshold = 64 << 10

// gcEvery is how often the engine rewrites value log files of which at least half is stale
// (badger's RunValueLogGC): the values past badgerValueThreshold that later writes replaced.
const gcEvery = 10 * time.Minute

func openBadger(opts Options) (*badgerEngine, error) {
	bo := badger.DefaultOptions(opts.Dir)
	if opts.InMemory {
		bo = badger.DefaultOptions("").WithInMemory(true)
	} else if err := os.MkdirAll(opts.Dir, 0o750); err != nil {
		return nil, fmt.Errorf("store: create data folder: %w", err)
	}
	// Badger would fsync once per transaction; the committer syncs once per group instead.
	bo = bo.WithSyncWrites(false).
		WithLogger(slogAdapter{l: opts.Log}).
		WithNumVersionsToKeep(1).
		WithMetricsEnabled(false).
		WithBlockCacheSize(int64(orDefault(opts.BlockCacheMB, DefaultBlockCacheMB)) << 20).
		WithIndexCacheSize(int64(orDefault(opts.IndexCacheMB, DefaultIndexCacheMB)) << 20).
		WithMemTableSize(int64(orDefault(opts.MemTableMB, DefaultMemTableMB)) << 20).
		WithNumMemtables(orDefault(opts.NumMemtables, DefaultNumMemtables)).
		WithNumCompactors(2).
		WithBaseLevelSize(baseLevelMB << 20)
	bo.BaseTableSize = baseTableMB << 20
	bo.BlockSize = blockKB << 10
	if !opts.InMemory { // in memory, badger refuses values past the threshold
		bo.ValueThreshold = badgerValueThreshold
	}
	bo.TableSizeMultiplier = tableSizeMultiplier // no With method in badger v4
	bdb, err := badger.Open(bo)
	if err != nil {
		return nil, fmt.Errorf("store: open %q: %w", opts.Dir, err)
	}
	durable := opts.SyncWrites && !opts.InMemory
	drainBuilders(bdb)
	e := &badgerEngine{bdb: bdb, c: newCommitter(bdb, bo.Dir, durable)}
	e.c.start()
	if !opts.InMemory {
		e.gcStop, e.gcDone = make(chan struct{}), make(chan struct{})
		go e.collect()
	}
	return e, nil
}

// collect rewrites, every gcEvery until close, each value log file of which half or more is
// stale (RunValueLogGC takes one file a call, and says ErrNoRewrite when none qualifies).
func (e *badgerEngine) collect() {
	defer close(e.gcDone)
	tick := time.NewTicker(gcEvery)
	defer tick.Stop()
	for {
		select {
		case <-e.gcStop:
			return
		case <-tick.C:
			for e.bdb.RunValueLogGC(0.5) == nil {
				select {
				case <-e.gcStop:
					return
				default:
				}
			}
		}
	}
}

func (e *badgerEngine) close() error {
	if e.bdb == nil || e.closed {
		return nil
	}
	e.closed = true
	if e.gcStop != nil {
		close(e.gcStop)
		<-e.gcDone
	}
	if e.c != nil {
		e.c.close()
	}
	return e.bdb.Close()
}

func (e *badgerEngine) commitStats() (commits, ops uint64) {
	return e.c.commits.Load(), e.c.ops.Load()
}

func (e *badgerEngine) syncStats() uint64 { return e.c.syncs.Load() }

func (e *badgerEngine) sync() error { return e.c.syncAll() }

func (e *badgerEngine) size() (lsm, vlog int64) { return e.bdb.Size() }

func (e *badgerEngine) cacheUsage() (block, index int64) {
	used := func(m *ristretto.Metrics) int64 {
		if m == nil {
			return 0
		}
		return int64(m.CostAdded()) - int64(m.CostEvicted())
	}
	return used(e.bdb.BlockCacheMetrics()), used(e.bdb.IndexCacheMetrics())
}

func (e *badgerEngine) compact() error { return e.bdb.Flatten(2) }

func (e *badgerEngine) view(_ context.Context, fn func(*Txn) error) error {
	return e.bdb.View(func(t *badger.Txn) error { return fn(&Txn{r: badgerReader{t}}) })
}

func (e *badgerEngine) update(ctx context.Context, fn func(*Txn) error, unsynced bool) error {
	return e.c.submit(ctx, fn, unsynced)
}

// badgerBatch is badger's own write batch. It writes outside the committer, so the
// committer's hot keys are off from its start to its end (hot.go).
type badgerBatch struct {
	wb *badger.WriteBatch
	c  *committer
	// ended makes the end of the batch (Flush or Cancel) lift the fence once.
	ended bool
}

func (e *badgerEngine) newBatch() batchWriter {
	e.c.hot.fenceOn()
	return &badgerBatch{wb: e.bdb.NewWriteBatch(), c: e.c}
}

func (b *badgerBatch) set(key, val []byte) error { return b.wb.Set(key, val) }
func (b *badgerBatch) delete(key []byte) error   { return b.wb.Delete(key) }

func (b *badgerBatch) cancel() {
	b.wb.Cancel()
	b.end()
}

// end lifts the batch's fence once its writes are done.
func (b *badgerBatch) end() {
	if !b.ended {
		b.ended = true
		b.c.hot.fenceOff()
	}
}

func (b *badgerBatch) flush() error {
	err := b.wb.Flush()
	b.end()
	if err != nil {
		return err
	}
	if b.c.sync {
		return b.c.syncAll()
	}
	return nil
}

// badgerReader reads through one badger transaction.
type badgerReader struct{ t *badger.Txn }

func (r badgerReader) get(key []byte) ([]byte, error) {
	item, err := r.t.Get(key)
	if err != nil {
		return nil, mapErr(err)
	}
	return item.ValueCopy(nil)
}

func (r badgerReader) has(key []byte) (bool, error) {
	_, err := r.t.Get(key)
	if errors.Is(err, badger.ErrKeyNotFound) {
		return false, nil
	}
	return err == nil, mapErr(err)
}

func (r badgerReader) scan(o IterOptions, start []byte) cursor {
	bo := badger.DefaultIteratorOptions
	bo.Prefix = o.Prefix
	bo.Reverse = o.Reverse
	// No prefetching: values under badger's value threshold (1 MB, so every value this
	// project writes but large imports) live in the LSM tree beside their keys, and the
	// prefetcher's goroutines only add work. A 20-key page read from a random start took
	// 1.1 ms with it and 0.1 ms without (BenchmarkViewIterate/badger).
	bo.PrefetchValues = false
	it := r.t.NewIterator(bo)
	it.Seek(start)
	return &badgerCursor{it: it, prefix: o.Prefix}
}

// badgerCursor walks a badger iterator within a prefix.
type badgerCursor struct {
	it     *badger.Iterator
	prefix []byte
}

func (c *badgerCursor) valid() bool            { return c.it.ValidForPrefix(c.prefix) }
func (c *badgerCursor) key() []byte            { return c.it.Item().Key() }
func (c *badgerCursor) value() ([]byte, error) { return c.it.Item().ValueCopy(nil) }
func (c *badgerCursor) next()                  { c.it.Next() }
func (c *badgerCursor) err() error             { return nil }
func (c *badgerCursor) close()                 { c.it.Close() }

func mapErr(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, badger.ErrKeyNotFound):
		return fmt.Errorf("%w: %v", ErrNotFound, err)
	case errors.Is(err, badger.ErrTxnTooBig):
		return fmt.Errorf("%w: %v", ErrTooBig, err)
	case errors.Is(err, badger.ErrConflict):
		return fmt.Errorf("%w: %v", ErrConflict, err)
	}
	return err
}
