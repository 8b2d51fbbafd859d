package store

import (
	"bytes"
	"errors"
	"sync"
)

// Hot keys. A counter that every Update of a product reads and rewrites (records' counter
// stripes) costs a store read per Update on badger: a lookup through the memtables and every
// level of the LSM tree, on the committer's one goroutine. The badger committer keeps the
// values of such keys in memory instead (hotCache), exact because every write to the store
// goes through it or is fenced off from it:
//   - an Update's writes update the keys the cache holds when the committer applies them to
//     its transaction (so the Updates after it in the same commit see them, as a read of the
//     transaction would), and a transaction that is not committed (a conflict, a split, a
//     failed commit) empties the cache;
//   - a Batch or a Load writes outside the committer: while one runs the cache is empty and
//     unused, and one starts only between two commits (the commit in progress, which may have
//     read from the cache, comes first);
//   - the cache lives as long as the open database (a reopen starts empty).
// Postgres is shared by nodes whose writes the committer never sees: there GetHot is Get.

// maxHot bounds the keys the cache holds; past it, it starts again empty.
const maxHot = 4096

// hotCache holds the current value of the keys asked through GetHot, as of the committer's
// transaction (the committed store plus the Updates applied to the transaction so far).
type hotCache struct {
	// mu is held by the committer from the start of a transaction to the end of its commit,
	// and by a Batch or Load to start or end (see above); vals is only used under it.
	mu sync.Mutex
	// outside counts the Batches and Loads in progress; the cache is off while it is not 0.
	outside int
	vals    map[string]*hotVal
}

// hotVal is the value of one key, or that it has none.
type hotVal struct {
	v     []byte
	found bool
}

// begin starts a transaction of the committer: it returns the cache to use (nil while a
// Batch or Load runs), and holds mu until end.
func (h *hotCache) begin() *hotCache {
	h.mu.Lock()
	if h.outside > 0 {
		return nil
	}
	if h.vals == nil {
		h.vals = map[string]*hotVal{}
	}
	return h
}

// end ends the transaction begin started; kept reports whether the cache still holds the
// store's values (the transaction committed, or nothing was applied to it).
func (h *hotCache) end(kept bool) {
	if !kept {
		clear(h.vals)
	}
	h.mu.Unlock()
}

// fenceOn starts a write outside the committer: after the commit in progress, the cache is
// emptied and off until fenceOff.
func (h *hotCache) fenceOn() {
	h.mu.Lock()
	h.outside++
	clear(h.vals)
	h.mu.Unlock()
}

// fenceOff ends a write outside the committer that fenceOn started.
func (h *hotCache) fenceOff() {
	h.mu.Lock()
	h.outside--
	clear(h.vals)
	h.mu.Unlock()
}

// get returns the cached value of key; ok is false when the cache does not hold it.
func (h *hotCache) get(key []byte) (v []byte, found, ok bool) {
	e, ok := h.vals[string(key)]
	if !ok {
		return nil, false, false
	}
	return e.v, e.found, true
}

// put caches a value read from the transaction.
func (h *hotCache) put(key, v []byte, found bool) {
	if len(h.vals) >= maxHot {
		clear(h.vals)
	}
	h.vals[string(key)] = &hotVal{v: bytes.Clone(v), found: found}
}

// applied updates the cached keys that st writes, once st is applied to the transaction.
func (h *hotCache) applied(st *stage) {
	if len(h.vals) == 0 {
		return
	}
	for _, e := range st.entries {
		if c, ok := h.vals[string(e.key)]; ok {
			c.v, c.found = nil, !e.del
			if !e.del {
				c.v = bytes.Clone(e.val)
			}
		}
	}
}

// GetHot returns what Get returns, for a key that many Updates read and rewrite in turn (a
// counter). Inside an Update on badger it answers from the committer's memory of the key
// when it holds it (kept exact across the Updates and commits of this database; see hot.go),
// and the key joins that memory; elsewhere (View, postgres) it is Get.
func (tx *Txn) GetHot(key []byte) ([]byte, error) {
	if _, staged := tx.st.get(key); staged || tx.hot == nil {
		return tx.Get(key) // the Update's own write, or no memory to answer from
	}
	if v, found, ok := tx.hot.get(key); ok {
		if !found {
			return nil, ErrNotFound
		}
		return bytes.Clone(v), nil
	}
	v, err := tx.r.get(key)
	switch {
	case err == nil:
		tx.hot.put(key, v, true)
	case errors.Is(err, ErrNotFound):
		tx.hot.put(key, nil, false)
	}
	return v, err
}
