// Package store keeps every product's data in one transactional, ordered key-value store,
// under tenant-first keys: an embedded badger database (the default) or, for many gateway
// nodes sharing one store, a table in a PostgreSQL-wire database (PostgreSQL >= 13,
// CockroachDB, YugabyteDB).
//
// It is the only package that imports badger or the PostgreSQL driver (pgx). Products own
// their key prefixes and build keys with Key; they read and write through View and Update, one
// transaction per logical write, and the same code runs on either backend (Options.Backend).
//
// Both backends put every Update of a node through one group committer: the queued functions
// run one after another in one transaction, each over a stage of its own that joins the
// transaction only if it succeeds, and they commit together (one commit and one log flush for
// many writers). A caller never sees a conflict.
//
// Badger (badger.go, commit.go, wal.go): the committer's transaction is a badger transaction;
// durability is a pipelined fsync of badger's logs.
//
// PostgreSQL (postgres.go, pgcommit.go, pgtxn.go, pgbackup.go): one table gatehouse_kv
// (k bytea primary key, v bytea not null) beside gatehouse_meta (the schema version), both
// created when absent. bytea (CockroachDB's BYTES too) orders bytewise, as badger does. The
// committer's transaction is SERIALIZABLE: reads go to the database through it, the group's
// writes stay staged in memory (later functions read them) and go with the COMMIT in one round
// trip (an upsert of unnest arrays and a delete = any). Other nodes' transactions can make it
// fail with a serialization failure or a deadlock (SQLSTATE 40001, 40P01): the group runs
// again after an exponential backoff with jitter. View is a REPEATABLE READ READ ONLY
// transaction on a pooled connection, begun together with its first read; Iterate reads the
// range in batches (ORDER BY k [DESC] LIMIT n, from 32 rows growing to 1024) merged with the
// staged writes. docs/storage.md says why (and what was measured), and the limits.
package store

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"
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
	// ErrUnsupported reports an operation the backend in use does not have.
	ErrUnsupported = errors.New("store: not supported by this backend")
	// ErrKeyTooLong reports a write of a key longer than MaxKeyLen, refused on every backend.
	ErrKeyTooLong = errors.New("store: key too long")
)

// MaxKeyLen is the longest key a write may use, on every backend alike: PostgreSQL's btree
// takes an index row of at most 2,704 bytes (a third of a page; the key, its length header and
// the row header), badger 65,000 bytes. Set and Batch.Set refuse a longer key with
// ErrKeyTooLong at once, so a write that badger takes is never one that postgres refuses at
// commit. Products keep caller data in keys below it: they bound ids and names, and
// index/fields keeps a long value's prefix only.
const MaxKeyLen = 2048

// checkKey refuses a key longer than MaxKeyLen.
func checkKey(key []byte) error {
	if len(key) > MaxKeyLen {
		return fmt.Errorf("%w: %d bytes, at most %d (%.40q...)", ErrKeyTooLong, len(key), MaxKeyLen, key)
	}
	return nil
}

// Backends Options.Backend names.
const (
	// BackendBadger is the embedded badger database in Options.Dir (the default).
	BackendBadger = "badger"
	// BackendPostgres is a table in the PostgreSQL-wire database at Options.PostgresURL.
	BackendPostgres = "postgres"
)

// Options configures Open.
type Options struct {
	// Backend is BackendBadger (also when empty) or BackendPostgres.
	Backend string
	// PostgresURL is the libpq URL (postgres://user:pass@host:port/db?sslmode=...) of the
	// database the postgres backend uses. Its pool_max_conns parameter, when present, sets
	// the connection pool's size (default DefaultPostgresConns).
	PostgresURL string
	// PostgresTimeout bounds each statement the postgres backend sends, and each wait for a
	// pooled connection, Backup's one long read excepted (0: DefaultPostgresTimeout). A
	// server that stops answering without closing its connections (a network partition, a
	// machine lost) then fails the Updates and Views in flight after it, rather than stalling
	// them on TCP's own timeouts (many minutes); the connection a statement timed out on is
	// closed, and the pool opens another. It also sets the connect timeout when the URL has no
	// connect_timeout.
	PostgresTimeout time.Duration
	// Dir is the badger data folder; ignored when InMemory is set or on postgres.
	Dir string
	// SyncWrites makes every commit durable (fsync) before it returns. On postgres, false
	// commits with synchronous_commit off (the server still never loses consistency).
	SyncWrites bool
	// InMemory keeps everything in memory (badger only; tests and benchmarks).
	InMemory bool
	// Log receives the backend's own logs; nil discards them.
	Log *slog.Logger
	// Badger memory knobs; zero means the small default in brackets. Badger's own defaults
	// (64 MB memtables ×5, 256 MB block cache, unbounded index cache) cost over a gigabyte of
	// RSS at a million records; these keep the server near 200 MB.
	//
	// BlockCacheMB caches decompressed table blocks [32]; IndexCacheMB caches table indexes
	// and bloom filters [16]; MemTableMB is the size of one memtable (and so of the write
	// batch a transaction may hold, about 15% of it: 1.2 MB, some 13,000 entries) [8];
	// NumMemtables is how many may be in memory at once, the one being written and those
	// waiting for flush [2].
	//
	// Why 8 MB: a memtable's flush builds its table in one of badger's allocators, which
	// doubles its buffers as it fills (2, 4, 8, 16 MB... for the block and its compressed copy)
	// and goes back to a pool of 8 that keeps every buffer; compactions then reuse those
	// allocators. A 16 MB memtable grew them to 62 MB each (a 32 MB buffer), an 8 MB one to
	// 30 MB. Measured with a synthetic load of records' shape (300k records in batches of 500,
	// then 20 s of single-record writes from 8 writers, Go memory limit 200 MB): 16 MB peaked
	// at 262 MB of heap and ran 10,847 collections; 8 MB at 191 MB and 265 collections, with
	// the batches 53% and the single writes 25% faster (10 MB the same as 8, 12 MB as 16).
	BlockCacheMB, IndexCacheMB, MemTableMB, NumMemtables int
}

// Defaults of the memory knobs (see Options).
const (
	DefaultBlockCacheMB = 32
	DefaultIndexCacheMB = 16
	DefaultMemTableMB   = 8
	DefaultNumMemtables = 2
)

func orDefault(v, def int) int {
	if v <= 0 {
		return def
	}
	return v
}

// engine is what a backend implements; DB is the same for every backend.
type engine interface {
	view(ctx context.Context, fn func(*Txn) error) error
	// update commits fn; unsynced answers once committed, not waiting for durability.
	update(ctx context.Context, fn func(*Txn) error, unsynced bool) error
	newBatch() batchWriter
	backup(w io.Writer) error
	load(r io.Reader) error
	size() (int64, int64)
	compact() error
	commitStats() (commits, ops uint64)
	syncStats() uint64
	sync() error
	close() error
}

// batchWriter is a backend's Batch.
type batchWriter interface {
	set(key, val []byte) error
	delete(key []byte) error
	flush() error
	cancel()
}

// DB is an open database of either backend.
type DB struct {
	e       engine
	sync    bool
	backend string
}

// Open opens (or creates) the database described by opts.
func Open(opts Options) (*DB, error) {
	var (
		e   engine
		err error
	)
	switch opts.Backend {
	case "", BackendBadger:
		opts.Backend = BackendBadger
		e, err = openBadger(opts)
	case BackendPostgres:
		e, err = openPostgres(opts)
	default:
		return nil, fmt.Errorf("store: unknown backend %q (want %q or %q)", opts.Backend, BackendBadger, BackendPostgres)
	}
	if err != nil {
		return nil, err
	}
	return &DB{e: e, sync: opts.SyncWrites, backend: opts.Backend}, nil
}

// Close lets the Updates already begun or queued finish, then closes the database. It
// tolerates a nil or half-open DB.
func (db *DB) Close() error {
	if db == nil || db.e == nil {
		return nil
	}
	return db.e.close()
}

// Backend names the backend in use: BackendBadger or BackendPostgres.
func (db *DB) Backend() string { return db.backend }

// CommitStats reports how many transactions committed and how many Updates they held
// (ops/commits is badger's grouping factor; on postgres every Update is its own commit).
func (db *DB) CommitStats() (commits, ops uint64) { return db.e.commitStats() }

// SyncStats reports how many fsyncs made the committed Updates durable (with SyncWrites). On
// postgres it counts durable commits (the server flushes its log for each).
func (db *DB) SyncStats() uint64 { return db.e.syncStats() }

// SyncWrites reports whether commits are durable before they return.
func (db *DB) SyncWrites() bool { return db.sync }

// Sync forces buffered writes to disk; used when sync_writes is off but a caller needs
// durability. On postgres it commits one durable transaction, which flushes the server's log
// past every commit before it.
func (db *DB) Sync() error { return db.e.sync() }

// Size reports the on-disk size of the LSM tree and the value log in bytes; on postgres the
// table's total size (indexes and TOAST included) and 0.
func (db *DB) Size() (lsm, vlog int64) { return db.e.size() }

// CacheUsage reports the bytes badger's block and index caches hold (0, 0 on postgres, which
// keeps no cache in this process), for /metrics beside their bounds.
func (db *DB) CacheUsage() (block, index int64) {
	if c, ok := db.e.(interface{ cacheUsage() (int64, int64) }); ok {
		return c.cacheUsage()
	}
	return 0, 0
}

// Compact folds the whole LSM tree into its last level, as a store long at rest ends up, so
// that what a bulk load left for compaction is not paid by the next writes (benchmark data
// folders end with it). It runs beside reads and writes; on postgres it does nothing (the
// server keeps its own tables).
func (db *DB) Compact() error { return db.e.compact() }

// View runs fn in a read-only transaction: it sees one consistent snapshot.
func (db *DB) View(ctx context.Context, fn func(*Txn) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return db.e.view(ctx, fn)
}

// pingKey is the key Ping reads; nothing is ever stored there.
var pingKey = []byte("\x00ping")

// Ping reads one key in a read transaction: it fails while the database cannot be reached (a
// shared database down or failing over), so a node's readiness check can take it out of its
// load balancer's rotation. On badger it only fails on a closed store.
func (db *DB) Ping(ctx context.Context) error {
	return db.View(ctx, func(tx *Txn) error {
		_, err := tx.Has(pingKey)
		return err
	})
}

// Update runs fn in a read-write transaction and commits its writes when fn returns nil; it
// returns after that commit (durable with SyncWrites), or fn's error with nothing written.
//
// fn may run more than once (after a conflict with a Batch write, or on postgres with another
// node's transaction), so it must not have effects outside the transaction that a
// second run would repeat wrongly. fn must not call Update (it would wait for itself).
// A function whose writes alone exceed one commit gets ErrTooBig; a panic in fn is raised
// again in the caller's goroutine. Update never returns ErrConflict.
//
// Concurrent Updates are group-committed: fn runs on the committer's goroutine, after the
// functions queued before it on this node, whose writes it sees. Nodes sharing a postgres
// database are serialized by the database: the outcome is that of some serial order.
func (db *DB) Update(ctx context.Context, fn func(*Txn) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return db.e.update(ctx, fn, false)
}

// UpdateUnsynced is Update for writes that can be made again (the record of an image
// variant): it returns once fn's writes are committed, visible to every reader, without
// waiting for them to be durable. A crash of the process keeps them; a crash of the machine
// before the next durable commit (any Update's) or badger's own sync may lose them, never
// a part of one. On postgres it is Update.
func (db *DB) UpdateUnsynced(ctx context.Context, fn func(*Txn) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return db.e.update(ctx, fn, true)
}

// Backup writes a consistent snapshot of the database to w while it keeps serving, in
// badger's backup stream format whichever the backend (so Load takes it into either):
// Updates acknowledged before the call are in it; those committed meanwhile are not.
func (db *DB) Backup(w io.Writer) error { return db.e.backup(w) }

// Load writes the keys of a stream Backup produced (by either backend) into db, meant for an
// empty database: keys already there are overwritten. They are durable when it returns.
func (db *DB) Load(r io.Reader) error { return db.e.load(r) }

// Batch is a write-only batch for bulk loads: many keys, many internal commits, no reads.
type Batch struct{ b batchWriter }

// NewBatch starts a bulk write batch. Call Flush to commit what is left, or Cancel.
func (db *DB) NewBatch() *Batch { return &Batch{b: db.e.newBatch()} }

// Set queues key=val in the batch; a key longer than MaxKeyLen is refused (ErrKeyTooLong).
func (b *Batch) Set(key, val []byte) error {
	if err := checkKey(key); err != nil {
		return err
	}
	return b.b.set(key, val)
}

// Delete queues the removal of key in the batch.
func (b *Batch) Delete(key []byte) error { return b.b.delete(key) }

// Flush commits everything queued and waits for it (durably with SyncWrites).
func (b *Batch) Flush() error { return b.b.flush() }

// Cancel drops what has not been committed yet.
func (b *Batch) Cancel() { b.b.cancel() }
