package fields

import (
	"bytes"
	"sort"

	"github.com/gatehouse-dev/gatehouse/edge/store"
)

// Entry returns the entry of record id with the encoded value enc, below prefix, as a
// position in scan order (ScanOptions.After). The key Put stores is the same but for a long
// string, which it holds in its key form (see the package doc).
func Entry(prefix, enc []byte, id string) []byte { return (*Keys)(nil).Entry(prefix, enc, id) }

// Keys cuts keys from shared blocks of memory: a writer that builds a dozen keys at once (a
// record's index entries) allocates a block or two instead of a slice per key, which in a
// server's hot path costs more than the bytes. A key it returns has no spare capacity, so an
// append to it copies; it lives as long as any key of its block. A nil *Keys allocates each key
// on its own.
type Keys struct{ block []byte }

// keysBlock is the size of a Keys block (a record's entries fit in one or two).
const keysBlock = 1024

// alloc returns an empty slice with room for exactly n bytes.
func (k *Keys) alloc(n int) []byte {
	if k == nil {
		return make([]byte, 0, n)
	}
	if cap(k.block)-len(k.block) < n {
		k.block = make([]byte, 0, max(n, keysBlock))
	}
	i := len(k.block)
	k.block = k.block[:i+n]
	return k.block[i : i : i+n]
}

// Entry is the package's Entry, cut from k.
func (k *Keys) Entry(prefix, enc []byte, id string) []byte {
	b := k.alloc(len(prefix) + len(enc) + len(id))
	b = append(b, prefix...)
	b = append(b, enc...)
	return append(b, id...)
}

// Sub is the package's Sub, cut from k.
func (k *Keys) Sub(prefix, enc []byte) []byte {
	b := k.alloc(len(prefix) + len(enc))
	b = append(b, prefix...)
	return append(b, enc...)
}

// Sub returns the prefix of a compound index's entries whose leading value is enc: a compound
// entry is <prefix><encoded lead value><encoded value><record id>, so below Sub(prefix, lead)
// its entries are ordinary entries (Entry, Split, Scan, Put and Remove apply), ordered by the
// second value and then id. Since encodings are self-delimiting, the prefixes of two lead
// values never overlap.
func Sub(prefix, enc []byte) []byte { return (*Keys)(nil).Sub(prefix, enc) }

// Split returns the encoded value and the record id of an entry key below prefix (for a long
// string, its key form: the full value is the entry's value).
func Split(prefix, key []byte) (enc []byte, id string, err error) {
	rest := key[len(prefix):]
	n, err := Len(rest)
	if err != nil {
		return nil, "", err
	}
	return rest[:n], string(rest[n:]), nil
}

// KV is one key and its value, as a writer stores it.
type KV struct{ Key, Val []byte }

// Entries appends to dst the entries Put writes, for a writer that builds them before its
// transaction: one per value in encs (none for an empty encs), whose value is empty or, for a
// long string, its full encoding (its key holds the key form).
func Entries(dst []KV, prefix []byte, encs [][]byte, id string) []KV {
	return (*Keys)(nil).Entries(dst, prefix, encs, id)
}

// Entries is the package's Entries, the keys cut from k.
func (k *Keys) Entries(dst []KV, prefix []byte, encs [][]byte, id string) []KV {
	for _, e := range encs {
		var val []byte
		kf := keyForm(e)
		if len(kf) != len(e) {
			val = e
		}
		dst = append(dst, KV{k.Entry(prefix, kf, id), val})
	}
	return dst
}

// Put writes the entries of record id with the values encs below prefix (Entries).
func Put(txn *store.Txn, prefix []byte, encs [][]byte, id string) error {
	for _, e := range Entries(nil, prefix, encs, id) {
		if err := txn.Set(e.Key, e.Val); err != nil {
			return err
		}
	}
	return nil
}

// legacyMaxKey is badger's own key limit: before key forms, a long string's entry was written
// whole, in a key of at most this length.
const legacyMaxKey = 65000

// Remove deletes the entries Put wrote for the same values. For a long string it deletes the
// whole-value key too, which versions before key forms wrote (badger stores only).
func Remove(txn *store.Txn, prefix []byte, encs [][]byte, id string) error {
	for _, e := range encs {
		kf := keyForm(e)
		if err := txn.Delete(Entry(prefix, kf, id)); err != nil {
			return err
		}
		if legacy := Entry(prefix, e, id); len(kf) != len(e) && len(legacy) <= legacyMaxKey {
			if err := txn.Delete(legacy); err != nil {
				return err
			}
		}
	}
	return nil
}

// Bound is one end of a Range; a nil Value leaves that end open.
type Bound struct {
	Value     []byte
	Inclusive bool
}

// Range selects encoded values between Lo and Hi.
type Range struct{ Lo, Hi Bound }

// Eq is the Range of exactly one encoded value.
func Eq(enc []byte) Range {
	return Range{Lo: Bound{Value: enc, Inclusive: true}, Hi: Bound{Value: enc, Inclusive: true}}
}

// Contains reports whether enc is inside r.
func (r Range) Contains(enc []byte) bool {
	if r.Lo.Value != nil {
		c := bytes.Compare(enc, r.Lo.Value)
		if c < 0 || c == 0 && !r.Lo.Inclusive {
			return false
		}
	}
	if r.Hi.Value != nil {
		c := bytes.Compare(enc, r.Hi.Value)
		if c > 0 || c == 0 && !r.Hi.Inclusive {
			return false
		}
	}
	return true
}

// ScanOptions shapes Scan.
type ScanOptions struct {
	Range   Range
	Reverse bool
	// After resumes a scan strictly after this entry key (in scan order); nil starts at the edge.
	After []byte
}

// Scan visits the entries below prefix whose value lies in o.Range, in value then id order
// (both descending when Reverse), keys only. fn returns false to stop.
func Scan(txn *store.Txn, prefix []byte, o ScanOptions, fn func(enc []byte, id string) (bool, error)) error {
	return ScanBytes(txn, prefix, o, func(enc, id []byte) (bool, error) { return fn(enc, string(id)) })
}

// ScanBytes is Scan with the id as bytes, valid only during the call (no allocation per entry).
func ScanBytes(txn *store.Txn, prefix []byte, o ScanOptions, fn func(enc, id []byte) (bool, error)) error {
	return scan(txn, prefix, o, true, func(enc, id, _ []byte) (bool, error) { return fn(enc, id) })
}

// ScanValues is ScanBytes for entries that carry a value (compound entries with a record's
// projection): fn also gets the entry's value, a copy it may keep; enc and id are valid only
// during the call. Entries that carry a value of their own must have values no longer than
// MaxInline (an entry Put wrote for a long string carries that string's full encoding).
func ScanValues(txn *store.Txn, prefix []byte, o ScanOptions, fn func(enc, id, val []byte) (bool, error)) error {
	return scan(txn, prefix, o, false, fn)
}

func scan(txn *store.Txn, prefix []byte, o ScanOptions, keysOnly bool, fn func(enc, id, val []byte) (bool, error)) error {
	var afterEnc, afterID []byte
	if o.After != nil {
		rest := o.After[len(prefix):]
		n, err := Len(rest)
		if err != nil {
			return err
		}
		afterEnc, afterID = rest[:n], rest[n:]
	}
	// The key where the scan starts: the range's near end and the resume point, in key forms.
	// A long value's key form is the start (or, reverse, the end) of the run it shares. o.After
	// may hold a key form itself (a cursor's stand-in for a value it no longer knows): it sorts
	// before every full value of its run, so the whole run is visited from the start.
	var start []byte
	if !o.Reverse {
		if o.Range.Lo.Value != nil {
			start = append(append([]byte{}, prefix...), keyForm(o.Range.Lo.Value)...)
		}
		if o.After != nil {
			a := append(append([]byte{}, o.After...), 0)
			if kf := keyForm(afterEnc); truncated(kf) {
				a = append(append([]byte{}, prefix...), kf...)
			}
			if start == nil || bytes.Compare(a, start) >= 0 {
				start = a
			}
		}
	} else {
		if o.Range.Hi.Value != nil {
			start = append(append(append([]byte{}, prefix...), keyForm(o.Range.Hi.Value)...), 0xFF, 0xFF, 0xFF, 0xFF)
		}
		if o.After != nil {
			a := o.After
			if kf := keyForm(afterEnc); truncated(kf) {
				a = append(append(append([]byte{}, prefix...), kf...), 0xFF, 0xFF, 0xFF, 0xFF)
			}
			if start == nil || bytes.Compare(a, start) <= 0 {
				start = a
			}
		}
	}
	// visit hands on one entry of full value enc, in exact scan order.
	visit := func(enc, id, val []byte) (bool, error) {
		if !o.Range.Contains(enc) {
			// Past the far end of the range: stop; before the near end (exclusive bound): skip.
			if o.Reverse {
				if o.Range.Lo.Value != nil && bytes.Compare(enc, o.Range.Lo.Value) < 0 {
					return false, nil
				}
			} else if o.Range.Hi.Value != nil && bytes.Compare(enc, o.Range.Hi.Value) > 0 {
				return false, nil
			}
			return true, nil
		}
		return fn(enc, id, val)
	}
	// run holds the entries of one long-string key form (runKey), read in key order, until the
	// run ends: flush orders them by full value and id and visits those after o.After.
	var run []longEntry
	var runKey []byte
	flush := func() (bool, error) {
		defer func() { run = run[:0] }()
		sort.Slice(run, func(i, j int) bool { return run[i].before(run[j], o.Reverse) })
		for _, e := range run {
			if o.After != nil && !(longEntry{full: afterEnc, id: afterID}).before(e, o.Reverse) {
				continue
			}
			if more, err := visit(e.full, e.id, e.val); err != nil || !more {
				return false, err
			}
		}
		return true, nil
	}
	err := txn.Iterate(store.IterOptions{Prefix: prefix, Start: start, Reverse: o.Reverse, KeysOnly: keysOnly}, func(k, v []byte) (bool, error) {
		rest := k[len(prefix):]
		n, err := Len(rest)
		if err != nil {
			return false, err
		}
		enc, id := rest[:n], rest[n:]
		if len(run) > 0 && !bytes.Equal(enc, runKey) {
			if more, err := flush(); err != nil || !more {
				return false, err
			}
		}
		if truncated(enc) {
			full := v
			if keysOnly {
				if full, err = txn.Get(k); err != nil {
					return false, err
				}
			}
			if !bytes.Equal(keyForm(full), enc) {
				return false, ErrCorrupt
			}
			if len(run) == 0 {
				runKey = append(runKey[:0], enc...)
			}
			run = append(run, longEntry{full: bytes.Clone(full), id: bytes.Clone(id), val: bytes.Clone(v)})
			return true, nil
		}
		if o.After != nil && bytes.Equal(k, o.After) {
			return true, nil
		}
		return visit(enc, id, v)
	})
	if err == nil && len(run) > 0 {
		_, err = flush()
	}
	return err
}

// longEntry is an entry of a long string, with its full value.
type longEntry struct{ full, id, val []byte }

// before reports whether e comes before f in scan order: by full value, then id.
func (e longEntry) before(f longEntry, reverse bool) bool {
	c := bytes.Compare(e.full, f.full)
	if c == 0 {
		c = bytes.Compare(e.id, f.id)
	}
	if reverse {
		return c > 0
	}
	return c < 0
}

// Count counts the entries of r below prefix, stopping at limit (returns limit then).
func Count(txn *store.Txn, prefix []byte, r Range, limit int) (int, error) {
	n := 0
	err := ScanBytes(txn, prefix, ScanOptions{Range: r}, func(_, _ []byte) (bool, error) {
		n++
		return n < limit, nil
	})
	return n, err
}
