package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Iterate's batches on postgres: the first reads pgFirstPage rows (a scan often stops early:
// a page of a list, the newest entry), each next one four times more, up to pgMaxPage.
const (
	pgFirstPage = 32
	pgMaxPage   = 1024
)

// pgTxn reads through one transaction on one connection. The transaction begins with its
// first statement, in the same round trip (a function that reads nothing costs nothing).
type pgTxn struct {
	pool *pgxpool.Pool
	pc   *pgxpool.Conn
	conn *pgx.Conn
	ctx  context.Context
	// timeout bounds each statement and each wait for a connection (pgEngine.timeout); 0
	// leaves statements unbounded (Backup's one long read).
	timeout time.Duration
	begin   string
	began   bool
	// failed is the first error a statement met: the transaction is aborted (and must run
	// again when it is a serialization failure).
	failed error
}

// txn takes a pooled connection for a transaction that begin begins (with its first
// statement); release gives it back.
func (e *pgEngine) txn(ctx context.Context, begin string) (*pgTxn, error) {
	t := &pgTxn{pool: e.pool, ctx: ctx, timeout: e.timeout, begin: begin}
	if err := t.acquire(); err != nil {
		return nil, fmt.Errorf("store: postgres: %w", err)
	}
	return t, nil
}

// acquire takes a pooled connection, waiting at most the timeout.
func (t *pgTxn) acquire() error {
	ctx, cancel := t.stmt(t.ctx)
	defer cancel()
	pc, err := t.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	t.pc, t.conn = pc, pc.Conn()
	return nil
}

// stmt returns the context of one statement: ctx bounded by the timeout. pgx closes the
// connection of a statement whose context ends (it sets the socket's deadline), so a
// connection cut off by a partition goes out of the pool with it.
func (t *pgTxn) stmt(ctx context.Context) (context.Context, context.CancelFunc) {
	if t.timeout <= 0 {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, t.timeout)
}

// timedOut reports a statement or a wait for a connection cut off by the timeout.
func timedOut(err error) bool {
	return errors.Is(err, context.DeadlineExceeded) || pgconn.Timeout(err)
}

// release ends the transaction if it is still open and gives the connection back.
func (t *pgTxn) release() {
	t.rollback()
	if t.pc != nil {
		t.pc.Release()
		t.pc = nil
	}
}

// reconnect swaps a connection that failed before the transaction began (one the server
// closed while it sat in the pool, a restarted server) for another.
//
// The pool's other idle connections are closed too: what broke this one (a server restart, a
// failover, a network cut) most likely broke them, and each would otherwise fail one call more.
func (t *pgTxn) reconnect() error {
	t.pc.Release() // the pool drops a closed connection
	t.pc = nil
	t.pool.Reset()
	return t.acquire()
}

// connLost reports a failure of the connection itself rather than of a statement.
// A FATAL error the server sent as it closed counts (a restarted server's backends end their
// connections with 57P01 "terminating connection due to unexpected postmaster exit", which the
// pool's idle connections hold until they are next used).
func connLost(conn *pgx.Conn, err error) bool {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || !conn.IsClosed() {
		return false
	}
	var pe *pgconn.PgError
	return !errors.As(err, &pe) || pe.Severity == "FATAL"
}

// query runs sql and hands each row to scan, beginning the transaction first if needed. The
// rows are all read before query returns, so the connection is free for the next statement
// (Iterate's callback may Get).
func (t *pgTxn) query(scan func(pgx.Rows) error, sql string, args ...any) error {
	err := t.queryOnce(scan, sql, args...)
	// A connection lost before the transaction began lost nothing: try another, twice.
	for retry := 0; retry < 2 && err != nil && !t.began && connLost(t.conn, err); retry++ {
		if rerr := t.reconnect(); rerr != nil {
			break
		}
		err = t.queryOnce(scan, sql, args...)
	}
	if err != nil {
		if t.failed == nil {
			t.failed = err
		}
		return fmt.Errorf("store: postgres: %w", err)
	}
	return nil
}

// scanRows hands each row of rows to scan and closes rows, for queryAlone and queryOnce.
func scanRows(rows pgx.Rows, scan func(pgx.Rows) error) error {
	defer rows.Close()
	for rows.Next() {
		if err := scan(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}

// queryAlone runs sql as a statement of its own before the transaction begins (it sees every
// commit before it, in one round trip), handing each row to scan.
func (t *pgTxn) queryAlone(scan func(pgx.Rows) error, sql string, args ...any) error {
	once := func() error {
		ctx, cancel := t.stmt(t.ctx)
		defer cancel()
		rows, err := t.conn.Query(ctx, sql, args...)
		if err != nil {
			return err
		}
		return scanRows(rows, scan)
	}
	err := once()
	for retry := 0; retry < 2 && err != nil && connLost(t.conn, err); retry++ {
		if rerr := t.reconnect(); rerr != nil {
			break
		}
		err = once()
	}
	if err != nil {
		return fmt.Errorf("store: postgres: %w", err)
	}
	return nil
}

func (t *pgTxn) queryOnce(scan func(pgx.Rows) error, sql string, args ...any) error {
	b := &pgx.Batch{}
	if !t.began {
		b.Queue(t.begin)
	}
	b.Queue(sql, args...)
	ctx, cancel := t.stmt(t.ctx)
	defer cancel()
	br := t.conn.SendBatch(ctx, b)
	err := func() error {
		if !t.began {
			if _, err := br.Exec(); err != nil {
				return err
			}
			t.began = true
		}
		rows, err := br.Query()
		if err != nil {
			return err
		}
		return scanRows(rows, scan)
	}()
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	return err
}

func (t *pgTxn) get(key []byte) ([]byte, error) {
	var v []byte
	found := false
	err := t.query(func(r pgx.Rows) error {
		found = true
		return r.Scan(&v)
	}, `SELECT v FROM gatehouse_kv WHERE k = $1`, key)
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, ErrNotFound
	}
	if len(v) == 0 {
		v = nil // as badger: an empty value reads as nil
	}
	return v, nil
}

func (t *pgTxn) has(key []byte) (bool, error) {
	found := false
	err := t.query(func(pgx.Rows) error {
		found = true
		return nil
	}, `SELECT 1 FROM gatehouse_kv WHERE k = $1`, key)
	return found, err
}

// commit sends st's writes and the COMMIT in one round trip (with the BEGIN when nothing was
// read); a transaction that neither read nor wrote has nothing to commit.
func (t *pgTxn) commit(st *stage) error {
	var keys, vals, dels [][]byte
	for _, e := range st.entries {
		if e.del {
			dels = append(dels, e.key)
			continue
		}
		keys = append(keys, e.key)
		vals = append(vals, e.val)
	}
	if !t.began && len(keys)+len(dels) == 0 {
		return nil
	}
	b := &pgx.Batch{}
	if !t.began {
		b.Queue(t.begin)
	}
	if len(keys) > 0 {
		for i, v := range vals {
			if v == nil {
				vals[i] = []byte{} // the column is NOT NULL; a nil value is the empty one
			}
		}
		b.Queue(pgUpsert, keys, vals)
	}
	if len(dels) > 0 {
		b.Queue(pgDelete, dels)
	}
	b.Queue("COMMIT")
	sendsBegin := !t.began
	t.began = true // from here on, the connection may be in a transaction either way
	ctx, cancel := t.stmt(t.ctx)
	defer cancel()
	br := t.conn.SendBatch(ctx, b)
	if sendsBegin {
		// The BEGIN's own answer: a connection the server had closed before it (a restarted
		// server's FATAL waiting in the socket) ran nothing of the batch.
		if _, err := br.Exec(); err != nil {
			_ = br.Close()
			t.rollback()
			return &beginFailed{err: fmt.Errorf("store: postgres commit: %w", err)}
		}
	}
	if err := br.Close(); err != nil {
		t.rollback()
		var pe *pgconn.PgError
		if errors.As(err, &pe) && pe.Code == "54000" {
			// Set refuses keys past MaxKeyLen first; this is the server's word on one anyway.
			return fmt.Errorf("%w: PostgreSQL's index takes about 2,700 bytes: %w", ErrKeyTooLong, err)
		}
		return fmt.Errorf("store: postgres commit: %w", err)
	}
	t.began = false
	return nil
}

// beginFailed reports a commit batch whose BEGIN failed: nothing of it ran.
type beginFailed struct{ err error }

func (b *beginFailed) Error() string { return b.err.Error() }
func (b *beginFailed) Unwrap() error { return b.err }

// rollback ends the transaction if one is open, so the connection goes back to the pool
// clean; a connection where even that fails is closed (the pool then drops it).
func (t *pgTxn) rollback() {
	if !t.began {
		return
	}
	t.began = false
	ctx, cancel := t.stmt(context.WithoutCancel(t.ctx))
	defer cancel()
	if _, err := t.conn.Exec(ctx, "ROLLBACK"); err != nil {
		_ = t.conn.Close(context.Background())
	}
}

// scan reads the range of o in batches (see pgCursor).
func (t *pgTxn) scan(o IterOptions, start []byte) cursor {
	c := &pgCursor{t: t, o: o, limit: pgFirstPage, hi: prefixEnd(o.Prefix)}
	if start == nil {
		start = []byte{} // a nil parameter would be NULL, which compares to nothing
	}
	c.fetch(start, true)
	return c
}

// pgCursor walks a key range one batch of rows at a time: ORDER BY k [DESC] LIMIT n from the
// last key it read. Forward scans read [start, end of prefix), reverse ones [prefix, start].
type pgCursor struct {
	t     *pgTxn
	o     IterOptions
	hi    []byte // the first key above the prefix, nil when there is none
	limit int
	keys  [][]byte
	vals  [][]byte
	i     int
	more  bool // the last batch was full: there may be more rows
	e     error
}

// fetch reads the batch after from (inclusive of from on the first call).
func (c *pgCursor) fetch(from []byte, first bool) {
	c.keys, c.vals, c.i = c.keys[:0], c.vals[:0], 0
	cols := "k, v"
	if c.o.KeysOnly {
		cols = "k"
	}
	var cmp string
	switch {
	case c.o.Reverse && first:
		cmp = "<="
	case c.o.Reverse:
		cmp = "<"
	case first:
		cmp = ">="
	default:
		cmp = ">"
	}
	where := "k " + cmp + " $1"
	args := []any{from}
	switch {
	case c.o.Reverse && len(c.o.Prefix) > 0:
		where += " AND k >= $2"
		args = append(args, c.o.Prefix)
	case !c.o.Reverse && c.hi != nil:
		where += " AND k < $2"
		args = append(args, c.hi)
	}
	order := "k"
	if c.o.Reverse {
		order = "k DESC"
	}
	sql := fmt.Sprintf("SELECT %s FROM gatehouse_kv WHERE %s ORDER BY %s LIMIT %d", cols, where, order, c.limit)
	c.e = c.t.query(func(r pgx.Rows) error {
		var k, v []byte
		dst := []any{&k, &v}
		if c.o.KeysOnly {
			dst = dst[:1]
		}
		if err := r.Scan(dst...); err != nil {
			return err
		}
		c.keys = append(c.keys, k)
		c.vals = append(c.vals, v)
		return nil
	}, sql, args...)
	c.more = c.e == nil && len(c.keys) == c.limit
	c.limit = min(c.limit*4, pgMaxPage)
}

func (c *pgCursor) valid() bool { return c.e == nil && c.i < len(c.keys) }
func (c *pgCursor) key() []byte { return c.keys[c.i] }
func (c *pgCursor) err() error  { return c.e }
func (c *pgCursor) close()      {}

func (c *pgCursor) value() ([]byte, error) {
	if v := c.vals[c.i]; len(v) > 0 {
		return v, nil
	}
	return nil, nil // as badger: an empty value reads as nil
}

func (c *pgCursor) next() {
	c.i++
	if c.i == len(c.keys) && c.more {
		c.fetch(bytes.Clone(c.keys[c.i-1]), false)
	}
}

// prefixEnd returns the first key above every key that starts with prefix, or nil when no
// key is (an empty prefix, or one of 0xff bytes only).
func prefixEnd(prefix []byte) []byte {
	end := bytes.Clone(prefix)
	for len(end) > 0 {
		if end[len(end)-1] < 0xff {
			end[len(end)-1]++
			return end
		}
		end = end[:len(end)-1]
	}
	return nil
}
