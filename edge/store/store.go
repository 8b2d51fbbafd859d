// Package store keeps every product's data in one badger database, under tenant-first keys.
//
// It is the only package that imports badger. Products own their key prefixes and build keys
// with Key; they read and write through View and Update, one transaction per logical write.
// Every Update goes through the database's one group committer (commit.go): concurrent
// writers share a commit (and its fsync), and a caller never sees a conflict.
package store

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"

	badger "github.com/dgraph-io/badger/v4"
)

// Sentinel errors returned by the store.
var (
	// ErrNotFound reports that a key has no value.
	ErrNotFound = errors.New("store: not found")
	// ErrConflict reports that a concurrent transaction changed what this one read; retry it.
	ErrConflict = errors.New("store: transaction conflict")
	// ErrTooBig reports that a transaction holds more writes than one commit can take.
	ErrTooBig = errors.New("store: transaction too big")
	// ErrClosed reports an Update asked of a closed database.
	ErrClosed = errors.New("store: closed")
	// ErrReadOnly reports a write inside View.
	ErrReadOnly = errors.New("store: write in a read-only transaction")
)

// Options configures Open.
type Options struct {
	// Dir is the data folder; ignored when InMemory is set.
	Dir string
	// SyncWrites makes every commit durable (fsync) before it returns.
	SyncWrites bool
	// InMemory keeps everything in memory (tests and benchmarks only).
	InMemory bool
	// Logger receives badger's own logs; nil discards them.
	Logger *slog.Logger
	// Memory knobs; zero means the small default in brackets. Badger's own defaults (64 MB
	// memtables ×5, 256 MB block cache, unbounded index cache) cost over a gigabyte of RSS
	// at a million records; these keep the server near 200 MB.
	//
	// BlockCacheMB caches decompressed table blocks [32]; IndexCacheMB caches table indexes
	// and bloom filters [16]; MemTableMB is the size of one memtable (and so of the write
	// batch a transaction may hold, about 15% of it) [32]; NumMemtables is how many may be in
	// memory at once, the one being written and those waiting for flush [2].
	BlockCacheMB, IndexCacheMB, MemTableMB, NumMemtables int
}

// Defaults of the memory knobs (see Options).
const (
	DefaultBlockCacheMB = 32
	DefaultIndexCacheMB = 16
	DefaultMemTableMB   = 32
	DefaultNumMemtables = 2
)

func orDefault(v, def int) int {
	if v <= 0 {
		return def
	}
	return v
}

// DB is an open badger database.
type DB struct {
	bdb  *badger.DB
	sync bool
	c    *committer
}

// Open opens (or creates) the database described by opts.
func Open(opts Options) (*DB, error) {
	bo := badger.DefaultOptions(opts.Dir)
	if opts.InMemory {
		bo = badger.DefaultOptions("").WithInMemory(true)
	} else if err := os.MkdirAll(opts.Dir, 0o750); err != nil {
		return nil, fmt.Errorf("store: create data folder: %w", err)
	}
	// Badger would fsync once per transaction; the committer syncs once per group instead.
	bo = bo.WithSyncWrites(false).
		WithLogger(slogAdapter{l: opts.Logger}).
		WithNumVersionsToKeep(1).
		WithMetricsEnabled(false).
		WithBlockCacheSize(int64(orDefault(opts.BlockCacheMB, DefaultBlockCacheMB)) << 20).
		WithIndexCacheSize(int64(orDefault(opts.IndexCacheMB, DefaultIndexCacheMB)) << 20).
		WithMemTableSize(int64(orDefault(opts.MemTableMB, DefaultMemTableMB)) << 20).
		WithNumMemtables(orDefault(opts.NumMemtables, DefaultNumMemtables)).
		WithNumCompactors(2)
	bdb, err := badger.Open(bo)
	if err != nil {
		return nil, fmt.Errorf("store: open %q: %w", opts.Dir, err)
	}
	durable := opts.SyncWrites && !opts.InMemory
	db := &DB{bdb: bdb, sync: opts.SyncWrites, c: newCommitter(bdb, bo.Dir, durable)}
	db.c.start()
	return db, nil
}

// Close commits the Updates already queued, then flushes and closes the database. It
// tolerates a nil or half-open DB.
func (db *DB) Close() error {
	if db == nil || db.bdb == nil {
		return nil
	}
	if db.c != nil {
		db.c.close()
	}
	return db.bdb.Close()
}

// CommitStats reports how many transactions the group committer committed and how many
// Updates they held (ops/commits is the grouping factor).
func (db *DB) CommitStats() (commits, ops uint64) { return db.c.commits.Load(), db.c.ops.Load() }

// SyncStats reports how many fsyncs made the committed Updates durable (with SyncWrites).
func (db *DB) SyncStats() uint64 { return db.c.syncs.Load() }

// SyncWrites reports whether commits are durable before they return.
func (db *DB) SyncWrites() bool { return db.sync }

// Sync forces buffered writes to disk; used when sync_writes is off but a caller needs durability.
func (db *DB) Sync() error { return db.c.syncAll() }

// Size reports the on-disk size of the LSM tree and the value log in bytes.
func (db *DB) Size() (lsm, vlog int64) { return db.bdb.Size() }

// View runs fn in a read-only transaction.
func (db *DB) View(ctx context.Context, fn func(*Txn) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return db.bdb.View(func(t *badger.Txn) error { return fn(&Txn{t: t}) })
}

// Update runs fn in a read-write transaction and commits its writes when fn returns nil; it
// returns after that commit (durable with SyncWrites), or fn's error with nothing written.
//
// Concurrent Updates are group-committed: fn runs on the committer's goroutine, after the
// functions queued before it, whose writes it sees. fn may run more than once (a conflict with
// a Batch write re-runs it), so it must not have effects outside the transaction that a
// second run would repeat wrongly. fn must not call Update (it would wait for itself).
// A function whose writes alone exceed one commit gets ErrTooBig; a panic in fn is raised
// again in the caller's goroutine. Update never returns ErrConflict.
func (db *DB) Update(ctx context.Context, fn func(*Txn) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return db.c.submit(ctx, fn)
}

// Batch is a write-only batch for bulk loads: many keys, many internal commits, no reads.
type Batch struct {
	wb *badger.WriteBatch
	db *DB
}

// NewBatch starts a bulk write batch. Call Flush to commit what is left, or Cancel.
func (db *DB) NewBatch() *Batch { return &Batch{wb: db.bdb.NewWriteBatch(), db: db} }

// Set queues key=val in the batch.
func (b *Batch) Set(key, val []byte) error { return b.wb.Set(key, val) }

// Delete queues the removal of key in the batch.
func (b *Batch) Delete(key []byte) error { return b.wb.Delete(key) }

// Flush commits everything queued and waits for it (durably with SyncWrites).
func (b *Batch) Flush() error {
	if err := b.wb.Flush(); err != nil {
		return err
	}
	if b.db.c.sync {
		return b.db.c.syncAll()
	}
	return nil
}

// Cancel drops what has not been committed yet.
func (b *Batch) Cancel() { b.wb.Cancel() }

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
