package records

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/gatehouse-dev/gatehouse/edge/store"
	"github.com/gatehouse-dev/gatehouse/index/fields"
)

// CountsForTest reads a collection's counters (its published count and the per-value counts
// of field) as list and aggregate pages do, and recounts both from its stored records: the two
// strings are equal when the counters are exact.
func CountsForTest(s *Service, project, coll, field string) (counters, recount string, err error) {
	err = s.db.View(context.Background(), func(txn *store.Txn) error {
		n, err := readCount(txn, project, coll)
		if err != nil {
			return err
		}
		groups := map[string]int64{}
		if err := eachCount(txn, groupPrefix(project, coll, field), func(suf []byte, c int64) { groups[string(suf)] = c }); err != nil {
			return err
		}
		counters = fmt.Sprintf("count %d, groups %s", n, countsText(groups))
		var m int64
		rg := map[string]int64{}
		p := recPrefix(project, coll)
		err = txn.Iterate(store.IterOptions{Prefix: p}, func(k, v []byte) (bool, error) {
			r, err := decodeRecord(string(k[len(p):]), bytes.Clone(v))
			if err != nil || !r.published {
				return true, err
			}
			m++
			for _, x := range r.idx {
				if x.name != field || !x.group {
					continue
				}
				for _, e := range x.encs {
					if e[0] != fields.TagNull {
						rg[string(e)]++
					}
				}
			}
			return true, nil
		})
		recount = fmt.Sprintf("count %d, groups %s", m, countsText(rg))
		return err
	})
	return counters, recount, err
}

// countsText prints per-value counts in key order, keys quoted.
func countsText(m map[string]int64) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "%q=%d ", k, m[k])
	}
	return b.String()
}

// errFailedForTest is the error of PutInUpdateForTest's failing Updates.
var errFailedForTest = errors.New("records: failed on purpose")

// PutInUpdateForTest writes a record as Put does (record, indexes, counters) in an Update
// that then also writes pad bytes (under a key of its own) and, when fail, fails: the store
// then writes nothing of it.
func PutInUpdateForTest(s *Service, project, coll, id string, data map[string]any, pad int, fail bool) error {
	ctx := context.Background()
	sch, err := s.Schema(ctx, project, coll)
	if err != nil {
		return err
	}
	rec, probs := s.validate(sch, WriteRecord{ID: id, Data: data})
	if probs != nil {
		return validationOf(probs)
	}
	err = s.db.Update(ctx, func(txn *store.Txn) error {
		w := s.txWriter(txn)
		if _, err := w.put(project, coll, sch, rec); err != nil {
			return err
		}
		if err := w.flush(); err != nil {
			return err
		}
		if pad > 0 {
			if err := txn.Set([]byte("records-test/pad/"+id), make([]byte, pad)); err != nil {
				return err
			}
		}
		if fail {
			return errFailedForTest
		}
		return nil
	})
	if fail && errors.Is(err, errFailedForTest) {
		return nil
	}
	return err
}

// PreferredStripeForTest is the stripe node prefers (counters.go).
func PreferredStripeForTest(node string) int { return preferredStripe(node) }
