package store

import (
	"errors"
	"fmt"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	badger "github.com/dgraph-io/badger/v4"
)

// Group commit limits: one batch takes at most maxOps queued Updates; the transaction holding
// them is further bounded by badger's own size limits (a batch that would exceed them is
// split, see committer.round).
const (
	maxOps   = 256
	queueCap = 1024
)

// op is one Update waiting for the committer.
type op struct {
	fn func(*Txn) error
	// err is the verdict of fn itself (nil when it succeeded and its writes were applied).
	err error
	// panicked holds a panic of fn with its stack, re-raised in the caller's goroutine.
	panicked any
	done     chan struct{}
	// skipSync answers the caller once committed, without waiting for the sync
	// (DB.UpdateUnsynced).
	skipSync bool
}

// call runs fn, turning a panic into a value the caller re-raises.
func (o *op) call(tx *Txn) {
	defer func() {
		if p := recover(); p != nil {
			o.panicked = fmt.Sprintf("%v\n%s", p, debug.Stack())
			o.err = errPanicked
		}
	}()
	o.err = o.fn(tx)
}

var errPanicked = errors.New("store: update function panicked")

// committer is the one group committer of the database: every Update is queued to it, and it
// runs the queued functions one after another in one badger transaction and commits them
// together. Each function writes into its own stage, applied to the shared transaction only
// when it succeeds, so a failing function leaves no trace. Functions run on one goroutine, so
// they never conflict with each other; a conflict with a write made outside the committer (a
// Batch) re-runs the batch.
//
// With SyncWrites, durability is group-committed too, and pipelined: badger itself does not
// fsync (it would, once per transaction), the commit loop hands each committed batch to a
// syncer, and the syncer makes everything committed so far durable with one fsync while the
// loop already commits the next batches; then it answers their callers. Every caller is
// answered only after the commit holding its writes is durable. A reader may see a write a
// little before it is durable (as with any pipelined group commit); its writer is not answered
// until it is.
type committer struct {
	bdb *badger.DB
	// dir is the data folder, for the syncer's view of badger's write-ahead logs.
	dir  string
	sync bool
	// opQueue hands the Updates over (opqueue.go).
	opQueue
	// unsynced are committed ops waiting for the syncer (under smu, signalled by scond);
	// syncClosed tells it to stop once they are answered.
	smu        sync.Mutex
	scond      *sync.Cond
	unsynced   []*op
	syncClosed bool
	syncDone   chan struct{}
	// wal guards the syncer's memory of the write-ahead logs (see syncAll).
	wal walState
	// maxCount and maxSize are the transaction limits the batch stays under.
	maxCount, maxSize int64
	// valueThreshold is badger's: a value at least this long goes to the value log, the
	// others only to the memtable's log. vlogDirty (under smu) tells the syncer that a batch
	// it has not synced yet wrote one, so its next sync covers the value log too.
	valueThreshold int64
	vlogDirty      bool
	// hot keeps the values of the keys Updates read with GetHot (hot.go).
	hot hotCache
	// commits counts transactions committed, ops the Updates they held, syncs the fsyncs
	// that made them durable.
	commits, ops, syncs atomic.Uint64
}

func newCommitter(bdb *badger.DB, dir string, durable bool) *committer {
	c := &committer{bdb: bdb, dir: dir, sync: durable, syncDone: make(chan struct{}),
		maxCount: bdb.MaxBatchCount(), maxSize: bdb.MaxBatchSize(), valueThreshold: bdb.Opts().ValueThreshold}
	c.opQueue.init()
	c.scond = sync.NewCond(&c.smu)
	return c
}

// start runs the commit loop and, with SyncWrites, the syncer.
func (c *committer) start() {
	go c.loop(c.run)
	if c.sync {
		go c.syncLoop()
	} else {
		close(c.syncDone)
	}
}

// run commits batch in as few transactions as its size allows and answers every op: at once
// when its function failed or without SyncWrites, else through the syncer.
func (c *committer) run(batch []*op) {
	for len(batch) > 0 {
		n, vlog := c.round(batch)
		var durable []*op
		for _, o := range batch[:n] {
			if c.sync && o.err == nil && !o.skipSync {
				durable = append(durable, o)
				continue
			}
			close(o.done)
		}
		if len(durable) > 0 || (c.sync && vlog) {
			// A round of unsynced writes alone that wrote to the value log marks it for the
			// next sync, so that no synced log entry ever points past the synced value log.
			c.smu.Lock()
			c.unsynced = append(c.unsynced, durable...)
			c.vlogDirty = c.vlogDirty || vlog
			c.smu.Unlock()
			if len(durable) > 0 {
				c.scond.Signal()
			}
		}
		batch = batch[n:]
	}
}

// syncLoop makes the committed batches durable, as many as are waiting with one sync, and
// answers their callers.
func (c *committer) syncLoop() {
	defer close(c.syncDone)
	for {
		c.smu.Lock()
		for len(c.unsynced) == 0 && !c.syncClosed {
			c.scond.Wait()
		}
		ops, vlog := c.unsynced, c.vlogDirty
		c.unsynced, c.vlogDirty = nil, false
		closed := c.syncClosed
		c.smu.Unlock()
		if len(ops) > 0 {
			err := c.syncLogs(vlog)
			c.syncs.Add(1) // counted before any caller is answered, who may read the count
			for _, o := range ops {
				if err != nil {
					o.err = fmt.Errorf("store: sync: %w", err)
				}
				close(o.done)
			}
		}
		if closed && len(ops) == 0 {
			return
		}
	}
}

// errSplit asks round to commit a shorter prefix.
var errSplit = errors.New("store: split batch")

// round commits a prefix of ops in one transaction, retrying conflicts, and returns its
// length and whether the transaction wrote to the value log; each op's err holds its verdict.
func (c *committer) round(ops []*op) (int, bool) {
	for attempt := 0; ; attempt++ {
		n, vlog, err := c.try(ops)
		switch {
		case errors.Is(err, errSplit):
			ops = ops[:n]
			continue
		case errors.Is(err, badger.ErrConflict):
			// A write outside the committer changed what a function read: run them again.
			if attempt >= 3 {
				time.Sleep(time.Duration(min(attempt, 20)) * time.Millisecond)
			}
			continue
		}
		applied := 0
		for _, o := range ops[:n] {
			if o.err == nil {
				o.err = mapErr(err)
				applied++
			}
		}
		if err == nil && applied > 0 {
			c.commits.Add(1)
			c.ops.Add(uint64(applied))
		}
		return n, vlog
	}
}

// try runs ops in one transaction until the next would not fit, commits, and returns how many
// it ran and whether one of their values went to the value log. An op that alone exceeds the
// limits gets ErrTooBig.
func (c *committer) try(ops []*op) (n int, vlog bool, err error) {
	hot := c.hot.begin()
	// size is what badger counts (values in the value log as pointers), raw all the bytes,
	// bounded as on postgres so that what fits one backend fits the other.
	var count, size, raw int64
	// The hot keys stay cached when the transaction commits or nothing was applied to it.
	defer func() { c.hot.end(count == 0 || err == nil) }()
	txn := c.bdb.NewTransaction(true)
	defer txn.Discard()
	// logs are the journal entries of the ops applied, written as one key a prefix at commit.
	var logs []logEntry
	for ; n < len(ops); n++ {
		o := ops[n]
		st := &stage{}
		o.call(&Txn{r: badgerReader{txn}, st: st, hot: hot})
		if o.err != nil {
			continue
		}
		lsm := st.size
		if c.valueThreshold <= badgerValueThreshold {
			lsm -= st.inVlog
		}
		if count+st.count >= c.maxCount || size+lsm >= c.maxSize || raw+st.size > PostgresMaxBytes {
			if count == 0 {
				o.err = fmt.Errorf("%w: %d writes, %d bytes", ErrTooBig, st.count, lsm)
				continue
			}
			break
		}
		if err := st.apply(txn); err != nil {
			// Badger refused a write (the size estimate fell short, or a key it does not
			// take): the transaction holds part of this op's writes, so it is dropped. Alone,
			// the op gets the error; else the ops before it are committed without it.
			if count == 0 {
				o.err = mapErr(err)
				return n + 1, vlog, nil
			}
			return n, vlog, errSplit
		}
		if hot != nil {
			hot.applied(st)
		}
		logs = append(logs, st.logs...)
		count += st.count
		size += lsm
		raw += st.size
		vlog = vlog || int64(st.maxVal) >= c.valueThreshold
	}
	if count == 0 {
		return n, vlog, nil
	}
	for _, e := range journalWrites(logs) {
		if err := txn.Set(e.key, e.val); err != nil {
			return n, vlog, err
		}
		vlog = vlog || int64(len(e.val)) >= c.valueThreshold
	}
	return n, vlog, txn.Commit()
}

// close stops the committer after everything queued is committed (and synced).
func (c *committer) close() {
	c.stop()
	c.smu.Lock()
	c.syncClosed = true
	c.smu.Unlock()
	c.scond.Broadcast()
	<-c.syncDone
	c.wal.close()
}
