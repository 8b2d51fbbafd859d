package store

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"sort"

	badger "github.com/dgraph-io/badger/v4"
)

// Txn is one transaction, read-only inside View and read-write inside Update. Inside Update
// the writes go to a stage of their own first (applied by the committer on badger, sent with
// the commit on postgres), and reads see them.
type Txn struct {
	r  reader
	st *stage
	// hot is the badger committer's cache of hot keys (hot.go), nil elsewhere.
	hot *hotCache
}

// reader is how a backend reads inside one transaction.
type reader interface {
	// get returns a copy of the value at key, or ErrNotFound.
	get(key []byte) ([]byte, error)
	has(key []byte) (bool, error)
	// scan returns a cursor on the first key of o's scan from start on (start is never nil).
	scan(o IterOptions, start []byte) cursor
}

// cursor walks the stored keys of one scan, in its order.
type cursor interface {
	// valid reports whether the cursor is on a key of the scan; when not, err tells why.
	valid() bool
	// key is only valid until next.
	key() []byte
	// value returns a value the caller may keep.
	value() ([]byte, error)
	next()
	err() error
	close()
}

// Get returns a copy of the value at key, or ErrNotFound.
func (tx *Txn) Get(key []byte) ([]byte, error) {
	if e, ok := tx.st.get(key); ok {
		if e.del {
			return nil, ErrNotFound
		}
		return bytes.Clone(e.val), nil
	}
	return tx.r.get(key)
}

// Has reports whether key has a value.
func (tx *Txn) Has(key []byte) (bool, error) {
	if e, ok := tx.st.get(key); ok {
		return !e.del, nil
	}
	return tx.r.has(key)
}

// Set writes key=val. Neither slice may be changed until the transaction ends. A key longer
// than MaxKeyLen is refused with ErrKeyTooLong (and nothing written).
func (tx *Txn) Set(key, val []byte) error {
	if tx.st == nil {
		return ErrReadOnly
	}
	if err := checkKey(key); err != nil {
		return err
	}
	tx.st.put(key, val, false)
	return nil
}

// Delete removes key.
func (tx *Txn) Delete(key []byte) error {
	if tx.st == nil {
		return ErrReadOnly
	}
	tx.st.put(key, nil, true)
	return nil
}

// Journal adds entry to the transaction's journal under prefix, for a follower that reads the
// journal in commit order (records' title journal). The entries of every Update committed in
// one transaction are stored together, in the order written, under one key: prefix followed
// by a new id (NewID, so later commits sort after earlier ones), whose value JournalEntries
// reads back. One key per commit instead of one per Update spares the store a write per
// Update on the committer's one goroutine, and the follower a deletion per entry. Reads
// inside the Update do not see its journal entries. An Update that fails leaves none.
func (tx *Txn) Journal(prefix, entry []byte) error {
	if tx.st == nil {
		return ErrReadOnly
	}
	if len(prefix)+idLen > MaxKeyLen {
		return fmt.Errorf("%w: a journal prefix of %d bytes", ErrKeyTooLong, len(prefix))
	}
	if len(tx.st.logs) == 0 {
		tx.st.count++ // room for a journal key (journalWrites), the stage's first entry's
	}
	tx.st.logs = append(tx.st.logs, logEntry{prefix: prefix, entry: entry})
	// What the entry adds to the commit, at most: its bytes and length, and a key of its own.
	tx.st.size += int64(len(entry)+binary.MaxVarintLen64+len(prefix)+idLen) + 16
	tx.st.pointed(len(entry))
	return nil
}

// pointed counts in inVlog a value of n bytes that badger (on disk) keeps in its value log,
// less the pointer to it the transaction holds (12 bytes; at most 20 with its varints).
func (st *stage) pointed(n int) {
	if n >= badgerValueThreshold {
		st.inVlog += int64(n - 20)
	}
}

// idLen is the length of a NewID.
const idLen = 26

// journalList marks a journal value of several entries (JournalEntries); a value without it
// is one entry, as written before journals were grouped by commit.
const journalList = 0xff

// JournalEntries calls fn with each entry of a journal value (Txn.Journal), in the order they
// were written, and stops at fn's first error. A value not in the list format (written one
// entry to a key) is one entry; a list cut short is an error.
func JournalEntries(v []byte, fn func(entry []byte) error) error {
	if len(v) == 0 || v[0] != journalList {
		return fn(v)
	}
	for rest := v[1:]; len(rest) > 0; {
		n, k := binary.Uvarint(rest)
		if k <= 0 || n > uint64(len(rest)-k) {
			return errors.New("store: journal value cut short")
		}
		if err := fn(rest[k : k+int(n)]); err != nil {
			return err
		}
		rest = rest[k+int(n):]
	}
	return nil
}

// logEntry is one journal entry staged by an Update.
type logEntry struct{ prefix, entry []byte }

// journalWrites returns the keys and values that store the journal entries logs, one key per
// prefix, in the order each prefix first appears.
func journalWrites(logs []logEntry) []stagedEntry {
	var out []stagedEntry
	at := map[string]int{}
	for _, l := range logs {
		i, ok := at[string(l.prefix)]
		if !ok {
			i = len(out)
			at[string(l.prefix)] = i
			out = append(out, stagedEntry{key: append(bytes.Clone(l.prefix), NewID()...), val: []byte{journalList}})
		}
		out[i].val = binary.AppendUvarint(out[i].val, uint64(len(l.entry)))
		out[i].val = append(out[i].val, l.entry...)
	}
	return out
}

// IterOptions shapes a prefix scan.
type IterOptions struct {
	// Prefix limits the scan to keys that start with it.
	Prefix []byte
	// Start is the first key to visit (inclusive) when not nil; it must start with Prefix.
	// In reverse scans it is the last key to visit from the top.
	Start []byte
	// Reverse visits keys in descending order.
	Reverse bool
	// KeysOnly skips value reads (values are passed as nil).
	KeysOnly bool
}

// Iterate visits keys in order and calls fn with each key and value. Both slices are only valid
// during the call: copy them to keep them. fn returns false to stop early. Inside Update the
// transaction's own writes are visited too.
func (tx *Txn) Iterate(o IterOptions, fn func(key, val []byte) (bool, error)) error {
	start := o.Start
	if start == nil {
		start = o.Prefix
		if o.Reverse {
			start = append(append([]byte{}, o.Prefix...), 0xff, 0xff, 0xff, 0xff)
		}
	}
	staged := tx.st.scan(o.Prefix, start, o.Reverse)
	// before reports whether key a comes before key b in the scan's order.
	before := func(a, b []byte) bool {
		if o.Reverse {
			return bytes.Compare(a, b) > 0
		}
		return bytes.Compare(a, b) < 0
	}
	it := tx.r.scan(o, start)
	defer it.close()
	for {
		valid := it.valid()
		if !valid {
			if err := it.err(); err != nil {
				return err
			}
		}
		if len(staged) > 0 && (!valid || !before(it.key(), staged[0].key)) {
			e := staged[0]
			staged = staged[1:]
			if valid && bytes.Equal(it.key(), e.key) {
				it.next() // the staged write replaces the stored value
			}
			if e.del {
				continue
			}
			val := e.val
			if o.KeysOnly {
				val = nil
			}
			more, err := fn(e.key, val)
			if err != nil || !more {
				return err
			}
			continue
		}
		if !valid {
			return nil
		}
		var val []byte
		if !o.KeysOnly {
			v, err := it.value()
			if err != nil {
				return err
			}
			val = v
		}
		more, err := fn(it.key(), val)
		if err != nil || !more {
			return err
		}
		it.next()
	}
}

// stage holds the writes of one Update function until it succeeds; a nil stage is a
// read-only transaction's.
type stage struct {
	entries []stagedEntry
	// at indexes entries by key once there are more than stageScan of them; below, finding a
	// key by comparing it with each entry is cheaper than hashing it into a map (a record
	// write stages about 17 keys, on the committer's one goroutine).
	at map[string]int
	// count and size bound what applying the stage adds to the transaction (badger's own
	// accounting: an entry, its key and value, and a little overhead each).
	count, size int64
	// inVlog is what size counts of values of at least badgerValueThreshold that a badger
	// transaction holds as pointers into its value log (pointed).
	inVlog int64
	// maxVal is the length of the largest value staged (whether the value log gets one).
	maxVal int
	// logs are the journal entries staged (Txn.Journal), written at commit.
	logs []logEntry
	// parent holds the writes of the functions run before this one in the same transaction
	// and not committed yet (the postgres committer's group); reads see them under the
	// stage's own.
	parent *stage
}

type stagedEntry struct {
	key, val []byte
	del      bool
}

// stageScan is the most entries a stage finds a key among without its index (stage.at).
const stageScan = 32

func (st *stage) get(key []byte) (stagedEntry, bool) {
	if st == nil {
		return stagedEntry{}, false
	}
	if i := st.find(key); i >= 0 {
		return st.entries[i], true
	}
	return st.parent.get(key)
}

// find returns the index of key's entry, or -1.
func (st *stage) find(key []byte) int {
	if st.at != nil {
		if i, ok := st.at[string(key)]; ok {
			return i
		}
		return -1
	}
	for i := range st.entries {
		if bytes.Equal(st.entries[i].key, key) {
			return i
		}
	}
	return -1
}

func (st *stage) put(key, val []byte, del bool) {
	st.count++
	st.size += int64(len(key)+len(val)) + 16
	st.pointed(len(val))
	st.maxVal = max(st.maxVal, len(val))
	e := stagedEntry{key: key, val: val, del: del}
	if i := st.find(key); i >= 0 {
		st.entries[i] = e
		return
	}
	st.entries = append(st.entries, e)
	switch {
	case st.at != nil:
		st.at[string(key)] = len(st.entries) - 1
	case len(st.entries) > stageScan:
		st.at = make(map[string]int, 2*len(st.entries))
		for i, e := range st.entries {
			st.at[string(e.key)] = i
		}
	}
}

// scan returns the staged entries below prefix from start on, in scan order (with a parent's
// entries that the stage's own do not replace).
func (st *stage) scan(prefix, start []byte, reverse bool) []stagedEntry {
	if st == nil {
		return nil
	}
	var out []stagedEntry
	for _, e := range st.entries {
		if !bytes.HasPrefix(e.key, prefix) {
			continue
		}
		if c := bytes.Compare(e.key, start); reverse && c > 0 || !reverse && c < 0 {
			continue
		}
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool {
		if reverse {
			return bytes.Compare(out[i].key, out[j].key) > 0
		}
		return bytes.Compare(out[i].key, out[j].key) < 0
	})
	if up := st.parent.scan(prefix, start, reverse); len(up) > 0 {
		out = mergeStaged(out, up, reverse)
	}
	return out
}

// mergeStaged merges two lists in scan order; on a key both have, own's entry wins.
func mergeStaged(own, up []stagedEntry, reverse bool) []stagedEntry {
	out := make([]stagedEntry, 0, len(own)+len(up))
	for len(own) > 0 || len(up) > 0 {
		c := 0
		switch {
		case len(own) == 0:
			c = 1
		case len(up) == 0:
			c = -1
		default:
			c = bytes.Compare(own[0].key, up[0].key)
			if reverse {
				c = -c
			}
		}
		switch {
		case c < 0:
			out, own = append(out, own[0]), own[1:]
		case c > 0:
			out, up = append(out, up[0]), up[1:]
		default:
			out, own, up = append(out, own[0]), own[1:], up[1:]
		}
	}
	return out
}

// apply writes the stage into txn in the order the function wrote it.
func (st *stage) apply(txn *badger.Txn) error {
	for _, e := range st.entries {
		var err error
		if e.del {
			err = txn.Delete(e.key)
		} else {
			err = txn.Set(e.key, e.val)
		}
		if err != nil {
			return err
		}
	}
	return nil
}
