package store

import (
	"errors"

	"github.com/jackc/pgx/v5"
)

// manyReader is a reader that reads many keys at once cheaper than one get each (postgres:
// one statement, so one round trip, instead of one per key).
type manyReader interface {
	// getMany returns copies of the values at keys, in their order: nil for a missing key,
	// a non-nil empty slice for an empty value.
	getMany(keys [][]byte) ([][]byte, error)
}

// GetMany returns copies of the values at keys, in their order, with a nil entry for a key
// that has no value (and a non-nil empty slice for an empty value, so the two differ). The
// transaction's own writes win, as in Get. On postgres the stored values are read in one
// statement: a page of ids costs one round trip, not one per id.
func (tx *Txn) GetMany(keys [][]byte) ([][]byte, error) {
	out := make([][]byte, len(keys))
	var rest [][]byte // the keys the stage does not answer
	var at []int      // their places in out
	for i, k := range keys {
		if e, ok := tx.st.get(k); ok {
			if !e.del {
				out[i] = append([]byte{}, e.val...)
			}
			continue
		}
		rest = append(rest, k)
		at = append(at, i)
	}
	if len(rest) == 0 {
		return out, nil
	}
	if mr, ok := tx.r.(manyReader); ok {
		vals, err := mr.getMany(rest)
		if err != nil {
			return nil, err
		}
		for j, v := range vals {
			out[at[j]] = v
		}
		return out, nil
	}
	for j, k := range rest {
		v, err := tx.r.get(k)
		switch {
		case errors.Is(err, ErrNotFound):
			continue
		case err != nil:
			return nil, err
		case v == nil:
			v = []byte{}
		}
		out[at[j]] = v
	}
	return out, nil
}

var _ manyReader = (*pgTxn)(nil)

// getMany reads every key's row in one statement inside the transaction.
func (t *pgTxn) getMany(keys [][]byte) ([][]byte, error) {
	found := make(map[string][]byte, len(keys))
	err := t.query(func(r pgx.Rows) error {
		var k, v []byte
		if err := r.Scan(&k, &v); err != nil {
			return err
		}
		found[string(k)] = v
		return nil
	}, `SELECT k, v FROM gatehouse_kv WHERE k = ANY($1::bytea[])`, keys)
	if err != nil {
		return nil, err
	}
	out := make([][]byte, len(keys))
	for i, k := range keys {
		if v, ok := found[string(k)]; ok {
			out[i] = append([]byte{}, v...) // never nil; a key asked twice gets two copies
		}
	}
	return out, nil
}
