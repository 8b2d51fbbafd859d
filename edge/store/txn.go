package store

import (
	badger "github.com/dgraph-io/badger/v4"
)

// Txn is one badger transaction, read-only inside View and read-write inside Update.
type Txn struct{ t *badger.Txn }

// Get returns a copy of the value at key, or ErrNotFound.
func (tx *Txn) Get(key []byte) ([]byte, error) {
	item, err := tx.t.Get(key)
	if err != nil {
		return nil, mapErr(err)
	}
	return item.ValueCopy(nil)
}

// Has reports whether key has a value.
func (tx *Txn) Has(key []byte) (bool, error) {
	_, err := tx.t.Get(key)
	if err == badger.ErrKeyNotFound {
		return false, nil
	}
	return err == nil, mapErr(err)
}

// Set writes key=val. Neither slice may be changed until the transaction ends.
func (tx *Txn) Set(key, val []byte) error { return mapErr(tx.t.Set(key, val)) }

// Delete removes key.
func (tx *Txn) Delete(key []byte) error { return mapErr(tx.t.Delete(key)) }

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
// during the call: copy them to keep them. fn returns false to stop early.
func (tx *Txn) Iterate(o IterOptions, fn func(key, val []byte) (bool, error)) error {
	bo := badger.DefaultIteratorOptions
	bo.Prefix = o.Prefix
	bo.Reverse = o.Reverse
	bo.PrefetchValues = !o.KeysOnly
	it := tx.t.NewIterator(bo)
	defer it.Close()
	start := o.Start
	if start == nil {
		start = o.Prefix
		if o.Reverse {
			start = append(append([]byte{}, o.Prefix...), 0xff, 0xff, 0xff, 0xff)
		}
	}
	for it.Seek(start); it.ValidForPrefix(o.Prefix); it.Next() {
		item := it.Item()
		var val []byte
		if !o.KeysOnly {
			v, err := item.ValueCopy(nil)
			if err != nil {
				return err
			}
			val = v
		}
		more, err := fn(item.Key(), val)
		if err != nil || !more {
			return err
		}
	}
	return nil
}
