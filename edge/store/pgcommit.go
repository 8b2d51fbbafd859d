package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// pgCommitter is the postgres backend's group committer, the same design as badger's
// (commit.go): every Update of this node is queued to it, and it runs the queued functions one
// after another in one SERIALIZABLE transaction and commits them together, in one round trip
// with their writes. Each function writes into a stage of its own, over the stage of the
// functions before it in the group (it reads their writes), and the stage joins the group's
// only when the function succeeds. So the Updates of one node never conflict with each other
// (PostgreSQL's serializable isolation locks index pages, not only keys: concurrent
// transactions inserting time-ordered keys conflict even when their keys differ), one commit
// and its log flush serve many, and a node's functions run in the order they were queued, as
// on badger. Transactions of other nodes (or a Batch) can still make the group's commit fail
// with a serialization failure: the whole group then runs again after a backoff.
type pgCommitter struct {
	e *pgEngine
	// opQueue hands the Updates over (opqueue.go).
	opQueue
}

func newPGCommitter(e *pgEngine) *pgCommitter {
	c := &pgCommitter{e: e}
	c.opQueue.init()
	return c
}

// close stops the committer after everything queued is committed.
func (c *pgCommitter) close() { c.stop() }

// run commits batch in as few transactions as its size allows and answers every op.
func (c *pgCommitter) run(batch []*op) {
	for len(batch) > 0 {
		n := c.round(batch)
		for _, o := range batch[:n] {
			close(o.done)
		}
		batch = batch[n:]
	}
}

// groupFault reports an op whose function met a failure that is not a serialization failure
// (the transaction is aborted): it is answered with err, and the others run again without it.
type groupFault struct {
	i   int
	err error
}

func (f *groupFault) Error() string { return f.err.Error() }

// groupUnavailable reports a group that got no connection (the server is down), or whose
// statement timed out (the server stopped answering): every op of the group is answered with
// the error, and nothing of it was committed.
type groupUnavailable struct{ err error }

func (g *groupUnavailable) Error() string { return g.err.Error() }
func (g *groupUnavailable) Unwrap() error { return g.err }

// commitUnknown reports a connection lost while the group's COMMIT was in flight: the group
// may or may not have committed, so its ops are answered with the error and never run again
// (a write is never applied twice).
type commitUnknown struct{ err error }

func (g *commitUnknown) Error() string {
	return "store: postgres: the commit's outcome is unknown (connection lost): " + g.err.Error()
}
func (g *commitUnknown) Unwrap() error { return g.err }

// round commits a prefix of ops in one transaction, running it again after serialization
// failures, and returns its length; each op's err holds its verdict.
func (c *pgCommitter) round(ops []*op) int {
	for attempt := 0; ; attempt++ {
		for _, o := range ops {
			o.err, o.panicked = nil, nil
		}
		n, err := c.try(ops)
		var (
			fault       *groupFault
			unavailable *groupUnavailable
			unknown     *commitUnknown
		)
		switch {
		case err == nil:
			return n
		case errors.As(err, &unavailable) || errors.As(err, &unknown):
			for _, o := range ops[:n] {
				if o.err == nil {
					o.err = err
				}
			}
			return n
		case errors.As(err, &fault):
			// Answer the faulty op alone, first: move it to the front and report it done.
			f := ops[fault.i]
			copy(ops[1:fault.i+1], ops[:fault.i])
			ops[0] = f
			f.err = fault.err
			return 1
		case retryable(err) && attempt+1 < pgMaxAttempts:
			c.e.retries.Add(1)
			if attempt > 0 && attempt%50 == 0 && c.e.log != nil {
				c.e.log.Warn("store: a group of updates keeps meeting serialization failures", "runs", attempt+1, "updates", len(ops), "err", err)
			}
			time.Sleep(backoff(attempt))
			continue
		}
		// The server refused the group's writes (a key too long for its index): nothing was
		// committed. Alone, the op gets the error; in a group, each op is tried alone so the
		// others commit.
		if len(ops) == 1 {
			if ops[0].err == nil {
				ops[0].err = err
			}
			return 1
		}
		return c.round(ops[:1])
	}
}

// try runs ops in one transaction until the next would not fit, commits, and returns how many
// it ran. An op that alone exceeds the limits gets ErrTooBig.
func (c *pgCommitter) try(ops []*op) (int, error) {
	t, err := c.e.txn(context.Background(), pgBeginUpdate)
	if err != nil {
		return len(ops), &groupUnavailable{err: err}
	}
	defer t.release()
	group := &stage{}
	n := 0
	for ; n < len(ops); n++ {
		o := ops[n]
		st := &stage{parent: group}
		o.call(&Txn{r: t, st: st})
		if t.failed != nil {
			t.rollback()
			if retryable(t.failed) {
				return 0, t.failed
			}
			if timedOut(t.failed) {
				// The server stopped answering (a partition): every op of the group fails now,
				// rather than one after another, each after its own timeout.
				return len(ops), &groupUnavailable{err: t.failed}
			}
			if connLost(t.conn, t.failed) {
				// Nothing of the group was committed: run it again on another connection.
				return 0, fmt.Errorf("%w: %w", errConnLost, t.failed)
			}
			ferr := o.err
			if ferr == nil || ferr == errPanicked {
				ferr = t.failed
			}
			return 0, &groupFault{i: n, err: ferr}
		}
		if o.err != nil {
			continue
		}
		if err := checkKeys(st); err != nil {
			o.err = err
			continue
		}
		if group.count+st.count > PostgresMaxWrites || group.size+st.size > PostgresMaxBytes {
			if group.count == 0 {
				o.err = fmt.Errorf("%w: %d writes, %d bytes (at most %d, %d bytes)", ErrTooBig, st.count, st.size, PostgresMaxWrites, PostgresMaxBytes)
				continue
			}
			break
		}
		for _, w := range st.entries {
			group.put(w.key, w.val, w.del)
		}
		group.logs = append(group.logs, st.logs...)
	}
	for _, e := range journalWrites(group.logs) {
		group.put(e.key, e.val, false)
	}
	if err := t.commit(group); err != nil {
		var bf *beginFailed
		if errors.As(err, &bf) && connLost(t.conn, err) {
			// The BEGIN went with the writes and the COMMIT, and the server had closed the
			// connection before it (a restarted server's FATAL): nothing was committed. Run
			// the group again on a fresh connection, dropping the pool's other idle ones,
			// which the same event closed.
			t.pool.Reset()
			return 0, fmt.Errorf("%w: %w", errConnLost, err)
		}
		var pe *pgconn.PgError
		if !retryable(err) && !errors.As(err, &pe) {
			return n, &commitUnknown{err: err}
		}
		return n, err
	}
	if len(group.entries) > 0 {
		c.e.commits.Add(1)
		for _, o := range ops[:n] {
			if o.err == nil {
				c.e.ops.Add(1)
			}
		}
	}
	return n, nil
}

// checkKeys refuses an empty key, as badger does.
func checkKeys(st *stage) error {
	for _, w := range st.entries {
		if len(w.key) == 0 {
			return errEmptyKey
		}
	}
	return nil
}
