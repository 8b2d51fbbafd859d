package fields

import (
	"bytes"

	"github.com/gatehouse-dev/gatehouse/edge/store"
)

// Entry returns the index key of record id with the encoded value enc, below prefix.
func Entry(prefix, enc []byte, id string) []byte {
	k := make([]byte, 0, len(prefix)+len(enc)+len(id))
	k = append(k, prefix...)
	k = append(k, enc...)
	return append(k, id...)
}

// Sub returns the prefix of a compound index's entries whose leading value is enc: a compound
// entry is <prefix><encoded lead value><encoded value><record id>, so below Sub(prefix, lead)
// its entries are ordinary entries (Entry, Split, Scan, Put and Remove apply), ordered by the
// second value and then id. Since encodings are self-delimiting, the prefixes of two lead
// values never overlap.
func Sub(prefix, enc []byte) []byte {
	k := make([]byte, 0, len(prefix)+len(enc))
	k = append(k, prefix...)
	return append(k, enc...)
}

// Split returns the encoded value and the record id of an entry key below prefix.
func Split(prefix, key []byte) (enc []byte, id string, err error) {
	rest := key[len(prefix):]
	n, err := Len(rest)
	if err != nil {
		return nil, "", err
	}
	return rest[:n], string(rest[n:]), nil
}

// Put writes one entry per value in encs (an empty value: Index writes nothing).
func Put(txn *store.Txn, prefix []byte, encs [][]byte, id string) error {
	for _, e := range encs {
		if err := txn.Set(Entry(prefix, e, id), nil); err != nil {
			return err
		}
	}
	return nil
}

// Remove deletes the entries Put wrote for the same values.
func Remove(txn *store.Txn, prefix []byte, encs [][]byte, id string) error {
	for _, e := range encs {
		if err := txn.Delete(Entry(prefix, e, id)); err != nil {
			return err
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
// during the call.
func ScanValues(txn *store.Txn, prefix []byte, o ScanOptions, fn func(enc, id, val []byte) (bool, error)) error {
	return scan(txn, prefix, o, false, fn)
}

func scan(txn *store.Txn, prefix []byte, o ScanOptions, keysOnly bool, fn func(enc, id, val []byte) (bool, error)) error {
	var start []byte
	if !o.Reverse {
		if o.Range.Lo.Value != nil {
			start = append(append([]byte{}, prefix...), o.Range.Lo.Value...)
		}
		if o.After != nil && (start == nil || bytes.Compare(o.After, start) >= 0) {
			start = append(append([]byte{}, o.After...), 0)
		}
	} else {
		if o.Range.Hi.Value != nil {
			start = append(append(append([]byte{}, prefix...), o.Range.Hi.Value...), 0xFF, 0xFF, 0xFF, 0xFF)
		}
		if o.After != nil && (start == nil || bytes.Compare(o.After, start) <= 0) {
			start = o.After
		}
	}
	return txn.Iterate(store.IterOptions{Prefix: prefix, Start: start, Reverse: o.Reverse, KeysOnly: keysOnly}, func(k, v []byte) (bool, error) {
		if o.After != nil && bytes.Equal(k, o.After) {
			return true, nil
		}
		rest := k[len(prefix):]
		n, err := Len(rest)
		if err != nil {
			return false, err
		}
		enc, id := rest[:n], rest[n:]
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
		return fn(enc, id, v)
	})
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
