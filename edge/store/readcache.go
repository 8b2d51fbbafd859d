package store

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/jackc/pgx/v5"
)

// ReadCache keeps what Views read through it (ViewCached) — values by key and the entries of
// scans — for as long as a version stays the same: the values of the keys below a version
// prefix, which every write of what the cache covers changes in its own transaction (a caller
// that owns the covered keys writes a new random value there with each such write).
// ViewCached reads the version first, in one statement of its own, and drops what the cache
// holds when it changed: a read is then current as of the version read, and a View whose reads
// all hit the cache costs that one round trip and no transaction. Only keys Covers accepts are
// cached; the rest are read from the transaction as in View.
//
// It serves shared stores, where a read costs a round trip to the database; on badger, where
// reads are in-process, ViewCached is View.
type ReadCache struct {
	version []byte
	covers  func(key []byte) bool
	budget  *ReadBudget

	mu    sync.Mutex
	tag   string // the version the entries are current for
	vals  map[string]cachedVal
	scans map[string][]*scanRun // by scanName: the kept parts of scans of one prefix and order
	size  int                   // bytes held (keys, values and a little overhead each)
}

// ReadBudget bounds the bytes the ReadCaches that share it hold together: a cache that would
// take the total past it drops what it holds and starts again.
type ReadBudget struct {
	max  int64
	used atomic.Int64
}

// NewReadBudget returns a budget of maxBytes.
func NewReadBudget(maxBytes int64) *ReadBudget { return &ReadBudget{max: maxBytes} }

// Used reports the bytes the caches of the budget hold.
func (b *ReadBudget) Used() int64 { return b.used.Load() }

// readCacheScanLen bounds the entries one scan keeps (past them the scan goes on in the store
// and is not kept).
const (
	readCacheScanLen = 4096
	readCacheRuns    = 256 // the most parts of scans of one prefix and order kept
	readCacheEntry   = 48  // what an entry costs besides its key and value
)

// cachedVal is a cached read of one key: its value, or that it has none.
type cachedVal struct {
	v     []byte
	found bool
}

// scanRun is a part of the keys of one prefix, in one order: the entries from the key from on
// (inclusive; in reverse order from it down), every stored key up to the last one of keys
// (when done, every key to the end of the prefix).
type scanRun struct {
	from       []byte
	keys, vals [][]byte
	done       bool
	size       int
}

// at returns where in r a scan from start begins, when r covers start.
func (r *scanRun) at(start []byte, reverse bool) (int, bool) {
	before := func(a, b []byte) bool { // a comes before b in the run's order
		if reverse {
			return bytes.Compare(a, b) > 0
		}
		return bytes.Compare(a, b) < 0
	}
	if before(start, r.from) || !r.done && len(r.keys) > 0 && before(r.keys[len(r.keys)-1], start) {
		return 0, false // outside the part (checked first: a miss costs two comparisons)
	}
	i := sort.Search(len(r.keys), func(i int) bool { return !before(r.keys[i], start) })
	if i == len(r.keys) && !r.done {
		return 0, false
	}
	return i, true
}

// NewReadCache returns an empty cache of the keys covers accepts, current while the values
// below versionPrefix stay the same, holding what budget allows.
func NewReadCache(versionPrefix []byte, covers func(key []byte) bool, budget *ReadBudget) *ReadCache {
	return &ReadCache{version: bytes.Clone(versionPrefix), covers: covers, budget: budget,
		vals: map[string]cachedVal{}, scans: map[string][]*scanRun{}}
}

// Drop empties the cache (and gives its bytes back to the budget), for a cache its owner stops
// using.
func (c *ReadCache) Drop() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.dropLocked()
}

// check makes the cache current for version tag (dropping what it held for another) and
// returns tag.
func (c *ReadCache) check(tag string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.tag != tag {
		c.tag = tag
		c.dropLocked()
	}
	return tag
}

func (c *ReadCache) dropLocked() {
	clear(c.vals)
	clear(c.scans)
	c.budget.used.Add(-int64(c.size))
	c.size = 0
}

// val returns the cached read of key at version tag.
func (c *ReadCache) val(tag string, key []byte) (cachedVal, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.tag != tag {
		return cachedVal{}, false
	}
	cv, ok := c.vals[string(key)]
	return cv, ok
}

// keepVal caches a value read at version tag, unless the cache moved to another version since.
func (c *ReadCache) keepVal(tag string, key, v []byte, found bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.tag != tag {
		return
	}
	if _, ok := c.vals[string(key)]; ok {
		return
	}
	c.grow(len(key) + len(v) + readCacheEntry)
	c.vals[string(key)] = cachedVal{v: v, found: found}
}

// grow makes room for n more bytes.
func (c *ReadCache) grow(n int) {
	if c.budget.used.Load()+int64(n) > c.budget.max {
		c.dropLocked()
	}
	c.size += n
	c.budget.used.Add(int64(n))
}

// scanName names the scans of one prefix in one order.
func scanName(o IterOptions) string {
	var flags byte
	if o.Reverse {
		flags |= 1
	}
	if o.KeysOnly {
		flags |= 2
	}
	return string(append([]byte{flags}, o.Prefix...))
}

// scanFrom returns a kept part of the scan that covers start, and where the scan begins in it.
func (c *ReadCache) scanFrom(tag, name string, start []byte, reverse bool) (*scanRun, int, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.tag != tag {
		return nil, 0, false
	}
	for _, r := range c.scans[name] {
		if i, ok := r.at(start, reverse); ok {
			return r, i, true
		}
	}
	return nil, 0, false
}

// keepScan keeps a part of a scan read at version tag, in place of old (the part it extends,
// nil when none), unless the cache moved on since.
func (c *ReadCache) keepScan(tag, name string, old, run *scanRun) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.tag != tag {
		return
	}
	runs := c.scans[name]
	if old != nil {
		for i, r := range runs {
			if r == old {
				runs = append(runs[:i:i], runs[i+1:]...)
				c.size -= old.size
				c.budget.used.Add(-int64(old.size))
				break
			}
		}
	}
	if len(runs) >= readCacheRuns {
		c.size -= runs[0].size
		c.budget.used.Add(-int64(runs[0].size))
		runs = runs[1:]
	}
	c.grow(run.size)
	c.scans[name] = append(runs[:len(runs):len(runs)], run)
}

// cachedViewer is an engine whose Views can go through a ReadCache.
type cachedViewer interface {
	viewCached(ctx context.Context, c *ReadCache, fn func(*Txn) error) error
}

// ViewCached is View through c (see ReadCache): reads of covered keys are served from c when
// it holds them for the current version and kept in it when not. The reads are current as of
// the version read that begins the call, but not one snapshot: a read that misses the cache
// sees the database's state when the View's transaction begins (at its first miss), which
// may include writes committed after the version read. Values read through c are shared with
// it: fn must not change them. On badger it is View.
func (db *DB) ViewCached(ctx context.Context, c *ReadCache, fn func(*Txn) error) error {
	cv, ok := db.e.(cachedViewer)
	if !ok || c == nil {
		return db.View(ctx, fn)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return cv.viewCached(ctx, c, fn)
}

var _ cachedViewer = (*pgEngine)(nil)

// ViewAt is View through c for a caller that knows the version itself: a store no other
// process writes (badger), whose writer moves a counter of its own (version) after each
// commit of what c covers. Reads are served from c while it holds them for version and kept in
// it when not; read version before the call, so that a View that begins after a commit reads
// a version of after it. A View of an older version than the one c holds reads the store and
// keeps nothing (a slow reader never drops what newer readers keep). Values read through c are
// shared with it: fn must not change them.
func (db *DB) ViewAt(ctx context.Context, c *ReadCache, version uint64, fn func(*Txn) error) error {
	if c == nil {
		return db.View(ctx, fn)
	}
	tag, current := c.checkAt(version)
	return db.View(ctx, func(txn *Txn) error {
		if !current {
			return fn(txn)
		}
		return fn(&Txn{r: &cacheReader{c: c, tag: tag, r: txn.r}, st: txn.st})
	})
}

// checkAt is check for the versions of ViewAt, which only move forward: it reports false for
// a version older than the cache's.
func (c *ReadCache) checkAt(version uint64) (string, bool) {
	tag := string(binary.BigEndian.AppendUint64([]byte{0}, version)) // never a tag of check's
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.tag != tag {
		if len(c.tag) == len(tag) && c.tag[0] == 0 && c.tag > tag {
			return tag, false
		}
		c.tag = tag
		c.dropLocked()
	}
	return tag, true
}

// viewCached reads c's version in a statement of its own on the View's connection, before
// the transaction (which begins with the first read c does not answer, if any).
func (e *pgEngine) viewCached(ctx context.Context, c *ReadCache, fn func(*Txn) error) error {
	if !e.enter() {
		return ErrClosed
	}
	defer e.leave()
	t, err := e.txn(ctx, pgBeginView)
	if err != nil {
		return err
	}
	defer t.release()
	var tag []byte
	err = t.queryAlone(func(r pgx.Rows) error {
		var k, v []byte
		if err := r.Scan(&k, &v); err != nil {
			return err
		}
		tag = binary.AppendUvarint(tag, uint64(len(k)))
		tag = append(append(tag, k...), v...)
		tag = binary.AppendUvarint(tag, uint64(len(v)))
		return nil
	}, `SELECT k, v FROM gatehouse_kv WHERE k >= $1 AND k < $2 ORDER BY k`, c.version, prefixEnd(c.version))
	if err != nil {
		return err
	}
	return fn(&Txn{r: &cacheReader{c: c, tag: c.check(string(tag)), r: t}})
}

// cacheReader reads through a ReadCache at one version, and from the transaction's reader r
// what the cache does not hold.
type cacheReader struct {
	c   *ReadCache
	tag string
	r   reader
}

var (
	_ reader     = (*cacheReader)(nil)
	_ manyReader = (*cacheReader)(nil)
)

func (cr *cacheReader) get(key []byte) ([]byte, error) {
	if !cr.c.covers(key) {
		return cr.r.get(key)
	}
	if cv, ok := cr.c.val(cr.tag, key); ok {
		if !cv.found {
			return nil, ErrNotFound
		}
		return cv.v, nil
	}
	v, err := cr.r.get(key)
	switch {
	case err == nil:
		cr.c.keepVal(cr.tag, key, v, true)
	case errors.Is(err, ErrNotFound):
		cr.c.keepVal(cr.tag, key, nil, false)
	}
	return v, err
}

func (cr *cacheReader) has(key []byte) (bool, error) {
	if !cr.c.covers(key) {
		return cr.r.has(key)
	}
	_, err := cr.get(key)
	if errors.Is(err, ErrNotFound) {
		return false, nil
	}
	return err == nil, err
}

// getMany answers the keys the cache holds and reads the others in one call.
func (cr *cacheReader) getMany(keys [][]byte) ([][]byte, error) {
	out := make([][]byte, len(keys))
	var rest [][]byte
	var at []int
	for i, k := range keys {
		if cr.c.covers(k) {
			if cv, ok := cr.c.val(cr.tag, k); ok {
				if cv.found {
					out[i] = cv.v
					if out[i] == nil {
						out[i] = []byte{}
					}
				}
				continue
			}
		}
		rest = append(rest, k)
		at = append(at, i)
	}
	if len(rest) == 0 {
		return out, nil
	}
	vals, err := (&Txn{r: cr.r}).GetMany(rest)
	if err != nil {
		return nil, err
	}
	for j, v := range vals {
		out[at[j]] = v
		if k := rest[j]; cr.c.covers(k) {
			cr.c.keepVal(cr.tag, k, v, v != nil)
		}
	}
	return out, nil
}

func (cr *cacheReader) scan(o IterOptions, start []byte) cursor {
	if !cr.c.covers(o.Prefix) {
		return cr.r.scan(o, start)
	}
	c := &cacheCursor{cr: cr, o: o, name: scanName(o), start: start}
	if run, i, ok := cr.c.scanFrom(cr.tag, c.name, start, o.Reverse); ok {
		c.cached, c.i = run, i
	}
	c.fresh = &scanRun{}
	c.settle()
	return c
}

// cacheCursor walks a kept part of a scan, then goes on in the store (under) and, when it
// closes, keeps what it read there with that part (or as a part of its own).
type cacheCursor struct {
	cr     *cacheReader
	o      IterOptions
	name   string
	start  []byte
	cached *scanRun // the kept part the scan began in (nil: none)
	i      int      // place in cached
	under  cursor   // the store's cursor, once past cached
	skip   []byte   // the key under starts at, already visited from cached
	fresh  *scanRun // what the walk read from the store, to keep (nil: too much to keep)
}

// settle moves onto the store when the kept part is walked and the scan has more.
func (c *cacheCursor) settle() {
	if c.cached != nil && (c.i < len(c.cached.keys) || c.cached.done) {
		return
	}
	from := c.start
	if c.cached != nil && len(c.cached.keys) > 0 {
		from = c.cached.keys[len(c.cached.keys)-1]
		c.skip = from
	}
	c.under = c.cr.r.scan(c.o, from)
	if c.skip != nil && c.under.valid() && bytes.Equal(c.under.key(), c.skip) {
		c.under.next()
	}
	c.record()
}

// record adds the store's entry the cursor is on to what it keeps.
func (c *cacheCursor) record() {
	f := c.fresh
	if f == nil || !c.under.valid() {
		return
	}
	var v []byte
	var err error
	if !c.o.KeysOnly { // a keys-only scan's kept part serves keys-only scans only (scanName)
		v, err = c.under.value()
	}
	k := c.under.key()
	if err != nil || len(f.keys) >= readCacheScanLen {
		c.fresh = nil
		return
	}
	f.keys = append(f.keys, bytes.Clone(k))
	f.vals = append(f.vals, v)
	f.size += len(k) + len(v) + readCacheEntry
}

func (c *cacheCursor) valid() bool {
	if c.under != nil {
		return c.under.valid()
	}
	return c.i < len(c.cached.keys)
}

func (c *cacheCursor) key() []byte {
	if c.under != nil {
		return c.under.key()
	}
	return c.cached.keys[c.i]
}

func (c *cacheCursor) value() ([]byte, error) {
	if c.under != nil {
		return c.under.value()
	}
	return c.cached.vals[c.i], nil
}

func (c *cacheCursor) next() {
	if c.under == nil {
		c.i++
		c.settle()
		return
	}
	c.under.next()
	c.record()
}

func (c *cacheCursor) err() error {
	if c.under != nil {
		return c.under.err()
	}
	return nil
}

// close keeps what the walk read from the store: appended to the kept part it went on from,
// or as a part from the scan's start.
func (c *cacheCursor) close() {
	if c.under == nil {
		return
	}
	defer c.under.close()
	f := c.fresh
	if f == nil || c.under.err() != nil {
		return
	}
	f.done = !c.under.valid()
	if len(f.keys) == 0 && !f.done {
		return
	}
	if old := c.cached; old != nil {
		run := &scanRun{from: old.from, done: f.done, size: old.size + f.size,
			keys: append(old.keys[:len(old.keys):len(old.keys)], f.keys...),
			vals: append(old.vals[:len(old.vals):len(old.vals)], f.vals...)}
		c.cr.c.keepScan(c.cr.tag, c.name, old, run)
		return
	}
	f.from = bytes.Clone(c.start)
	f.size += len(f.from)
	c.cr.c.keepScan(c.cr.tag, c.name, nil, f)
}
