package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// The postgres backend's schema: one table of keys and values, and the schema's version.
const (
	pgSchemaVersion = "1"
	pgCreateKV      = `CREATE TABLE IF NOT EXISTS gatehouse_kv (k bytea PRIMARY KEY, v bytea NOT NULL)`
	pgCreateMeta    = `CREATE TABLE IF NOT EXISTS gatehouse_meta (name text PRIMARY KEY, value text NOT NULL)`
	pgSetVersion    = `INSERT INTO gatehouse_meta (name, value) VALUES ('schema_version', '` + pgSchemaVersion + `') ON CONFLICT (name) DO NOTHING`
	pgGetVersion    = `SELECT value FROM gatehouse_meta WHERE name = 'schema_version'`

	pgBeginUpdate = `BEGIN ISOLATION LEVEL SERIALIZABLE`
	pgBeginView   = `BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY`
	// Batch writes are blind, but serializable all the same: PostgreSQL checks read-write
	// conflicts only among serializable transactions, so a Batch at a weaker level could slip
	// between a group's read and its write.
	pgBeginWrite = `BEGIN ISOLATION LEVEL SERIALIZABLE`
	pgUpsert     = `INSERT INTO gatehouse_kv (k, v) SELECT * FROM unnest($1::bytea[], $2::bytea[]) ON CONFLICT (k) DO UPDATE SET v = excluded.v`
	pgDelete     = `DELETE FROM gatehouse_kv WHERE k = ANY($1::bytea[])`
)

// Limits of the postgres backend.
const (
	// DefaultPostgresConns is the connection pool's size when the URL has no pool_max_conns.
	// The committer holds one while it runs a group; Views, Batches and backups use the
	// others (docs/storage.md has the measurements behind the number).
	DefaultPostgresConns = 16
	// DefaultPostgresTimeout is Options.PostgresTimeout's default: far above a statement's
	// time on a healthy server (milliseconds; a Batch commit of 4 MB well under a second), well
	// below TCP's timeouts.
	DefaultPostgresTimeout = 5 * time.Second
	// PostgresMaxWrites and PostgresMaxBytes bound what one Update may write (ErrTooBig past
	// them): entries, and bytes of keys and values. The badger committer bounds the bytes the
	// same way (its values past badgerValueThreshold go to the value log), so a function that
	// fits badger fits postgres; 40 MB takes a record of the largest body the server reads
	// (edge.MaxBodyBytes, 12 MB), which a write stores three times over.
	PostgresMaxWrites = 100_000
	PostgresMaxBytes  = 40 << 20
	// pgBatchWrites and pgBatchBytes are the size of one commit of a Batch.
	pgBatchWrites = 2000
	pgBatchBytes  = 4 << 20
	// pgMaxAttempts bounds the runs of one committer group (or Batch commit) through
	// serialization failures; pgBackoffMax caps the wait between two.
	pgMaxAttempts = 500
	pgBackoffMax  = 50 * time.Millisecond
)

// pgEngine is the shared backend: a table in a PostgreSQL-wire database.
type pgEngine struct {
	pool    *pgxpool.Pool
	durable bool
	// timeout bounds each statement and each wait for a connection (Options.PostgresTimeout).
	timeout time.Duration
	log     *slog.Logger
	// mu and active let close wait for the transactions begun before it.
	mu     sync.RWMutex
	closed bool
	active sync.WaitGroup
	c      *pgCommitter
	// commits counts the committer's transactions that wrote, ops the Updates they held,
	// retries the groups run again after a serialization failure.
	commits, ops, retries atomic.Uint64
}

var _ engine = (*pgEngine)(nil)

func openPostgres(opts Options) (*pgEngine, error) {
	if opts.PostgresURL == "" {
		return nil, errors.New("store: the postgres backend needs a URL (storage.postgres.url)")
	}
	cfg, err := pgxpool.ParseConfig(opts.PostgresURL)
	if err != nil {
		return nil, fmt.Errorf("store: postgres URL: %w", err)
	}
	if !strings.Contains(opts.PostgresURL, "pool_max_conns") {
		cfg.MaxConns = DefaultPostgresConns
	}
	if !opts.SyncWrites {
		cfg.ConnConfig.RuntimeParams["synchronous_commit"] = "off"
	}
	timeout := opts.PostgresTimeout
	if timeout <= 0 {
		timeout = DefaultPostgresTimeout
	}
	if cfg.ConnConfig.ConnectTimeout == 0 {
		// The pool opens connections apart from the caller's context: without a connect
		// timeout one opened across a partition would wait on TCP (and hold a pool slot).
		cfg.ConnConfig.ConnectTimeout = timeout
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("store: postgres: %w", err)
	}
	e := &pgEngine{pool: pool, durable: opts.SyncWrites, timeout: timeout, log: opts.Log}
	if err := e.migrate(ctx); err != nil {
		pool.Close()
		return nil, err
	}
	e.c = newPGCommitter(e)
	go e.c.loop(e.c.run)
	return e, nil
}

// migrate creates the tables when absent and checks the schema version. Nodes that start
// together may race on CREATE TABLE IF NOT EXISTS (PostgreSQL can then report a duplicate
// type): the loser tries again.
func (e *pgEngine) migrate(ctx context.Context) error {
	var err error
	for attempt := 0; attempt < 10; attempt++ {
		if err = e.migrateOnce(ctx); err == nil {
			return nil
		}
		var pe *pgconn.PgError
		if !errors.As(err, &pe) || (pe.Code != "23505" && pe.Code != "42P07" && !retryable(err)) {
			break
		}
		time.Sleep(backoff(attempt))
	}
	return fmt.Errorf("store: postgres schema: %w", err)
}

func (e *pgEngine) migrateOnce(ctx context.Context) error {
	for _, sql := range []string{pgCreateKV, pgCreateMeta, pgSetVersion} {
		if _, err := e.pool.Exec(ctx, sql); err != nil {
			return err
		}
	}
	var v string
	if err := e.pool.QueryRow(ctx, pgGetVersion).Scan(&v); err != nil {
		return err
	}
	if v != pgSchemaVersion {
		return fmt.Errorf("the database's schema version is %s, this gatehouse knows %s", v, pgSchemaVersion)
	}
	return nil
}

// enter registers a transaction unless the engine is closed; leave ends it.
func (e *pgEngine) enter() bool {
	e.mu.RLock()
	defer e.mu.RUnlock()
	if e.closed {
		return false
	}
	e.active.Add(1)
	return true
}

func (e *pgEngine) leave() { e.active.Done() }

// close commits the Updates already queued and waits for the transactions begun before it,
// then closes the pool.
func (e *pgEngine) close() error {
	e.mu.Lock()
	already := e.closed
	e.closed = true
	e.mu.Unlock()
	if already {
		return nil
	}
	e.c.close()
	e.active.Wait()
	e.pool.Close()
	return nil
}

func (e *pgEngine) commitStats() (commits, ops uint64) {
	return e.commits.Load(), e.ops.Load()
}

func (e *pgEngine) syncStats() uint64 {
	if !e.durable {
		return 0
	}
	return e.commits.Load() // the server flushes its log once per commit
}

// sync commits a transaction that has an id with synchronous_commit on: the server flushes
// its log up to that commit, so past every commit before it. Without SyncWrites only; with
// it every commit is durable already.
func (e *pgEngine) sync() error {
	if e.durable {
		return nil
	}
	if !e.enter() {
		return ErrClosed
	}
	defer e.leave()
	ctx, cancel := context.WithTimeout(context.Background(), e.timeout)
	defer cancel()
	b := &pgx.Batch{}
	b.Queue("BEGIN")
	b.Queue("SET LOCAL synchronous_commit = on")
	b.Queue("SELECT txid_current()")
	b.Queue("COMMIT")
	if err := e.pool.SendBatch(ctx, b).Close(); err != nil {
		return fmt.Errorf("store: sync: %w", err)
	}
	return nil
}

func (e *pgEngine) compact() error { return nil }

func (e *pgEngine) size() (int64, int64) {
	var n int64
	ctx, cancel := context.WithTimeout(context.Background(), e.timeout)
	defer cancel()
	if err := e.pool.QueryRow(ctx, `SELECT pg_total_relation_size('gatehouse_kv')`).Scan(&n); err != nil {
		return 0, 0
	}
	return n, 0
}

// update hands fn to the committer (pgcommit.go); every commit is durable (unsynced is not
// used: PostgreSQL's commits are its own).
func (e *pgEngine) update(ctx context.Context, fn func(*Txn) error, _ bool) error {
	return e.c.submit(ctx, fn, false)
}

// errEmptyKey refuses an empty key, as badger does.
var errEmptyKey = errors.New("store: a key cannot be empty")

// retryable reports a failure after which a transaction may run again: a serialization
// failure, a deadlock, or a connection that failed before the commit was sent.
func retryable(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, errConnLost) { // it may wrap the server's FATAL (connLost)
		return true
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code == "40001" || pe.Code == "40P01"
	}
	return pgconn.SafeToRetry(err)
}

// errConnLost marks a connection lost before the transaction's COMMIT was sent: the
// transaction is gone, nothing of it committed, it may run again.
var errConnLost = errors.New("store: postgres connection lost before the commit")

// backoff is the wait before run attempt+1: exponential from 1 ms, capped, with full jitter.
func backoff(attempt int) time.Duration {
	d := min(time.Millisecond<<min(attempt, 10), pgBackoffMax)
	return time.Duration(rand.Int64N(int64(d)) + 1)
}

// view runs fn in a read-only snapshot transaction.
func (e *pgEngine) view(ctx context.Context, fn func(*Txn) error) error {
	if !e.enter() {
		return ErrClosed
	}
	defer e.leave()
	t, err := e.txn(ctx, pgBeginView)
	if err != nil {
		return err
	}
	defer t.release()
	return fn(&Txn{r: t})
}

// pgBatch writes a Batch in commits of pgBatchWrites entries or pgBatchBytes.
type pgBatch struct {
	e  *pgEngine
	st *stage
}

func (e *pgEngine) newBatch() batchWriter { return &pgBatch{e: e, st: &stage{}} }

func (b *pgBatch) set(key, val []byte) error {
	b.st.put(bytes.Clone(key), bytes.Clone(val), false)
	return b.flushIfFull()
}

func (b *pgBatch) delete(key []byte) error {
	b.st.put(bytes.Clone(key), nil, true)
	return b.flushIfFull()
}

func (b *pgBatch) flushIfFull() error {
	if len(b.st.entries) < pgBatchWrites && b.st.size < pgBatchBytes {
		return nil
	}
	return b.flush()
}

func (b *pgBatch) cancel() { b.st = &stage{} }

func (b *pgBatch) flush() error {
	if len(b.st.entries) == 0 {
		return nil
	}
	if err := b.e.write(b.st); err != nil {
		return err
	}
	b.st = &stage{}
	return nil
}

// write commits st alone (blind writes), again after a serialization failure.
func (e *pgEngine) write(st *stage) error {
	if !e.enter() {
		return ErrClosed
	}
	defer e.leave()
	ctx := context.Background()
	for attempt := 0; ; attempt++ {
		err := func() error {
			t, err := e.txn(ctx, pgBeginWrite)
			if err != nil {
				return err
			}
			defer t.release()
			return t.commit(st)
		}()
		if !retryable(err) || attempt+1 >= pgMaxAttempts {
			return err
		}
		e.retries.Add(1)
		time.Sleep(backoff(attempt))
	}
}
