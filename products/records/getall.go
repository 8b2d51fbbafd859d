package records

// getAll returns the records of ids in their order (nil for a missing one), as one get per id
// would. On a shared store, where get reads every record's stored bytes, the bytes of all of
// them are read with one store.Txn.GetMany: one round trip to PostgreSQL instead of one per
// record of a page.
func (rd *recReader) getAll(project, coll string, ids []string) ([]*record, error) {
	return rd.readAll(project, coll, ids, true)
}

// peekAll is getAll without caching what it reads, as one peek per id would (aggregates).
func (rd *recReader) peekAll(project, coll string, ids []string) ([]*record, error) {
	return rd.readAll(project, coll, ids, false)
}

// readAll is getAll (keep) or peekAll.
func (rd *recReader) readAll(project, coll string, ids []string, keep bool) ([]*record, error) {
	out := make([]*record, len(ids))
	if !rd.s.shared {
		for i, id := range ids {
			var r *record
			var err error
			if keep {
				r, err = rd.get(project, coll, id)
			} else {
				r, err = rd.peek(project, coll, id)
			}
			if err != nil {
				return nil, err
			}
			out[i] = r
		}
		return out, nil
	}
	keys := make([][]byte, len(ids))
	for i, id := range ids {
		keys[i] = recKey(project, coll, id)
	}
	raws, err := rd.txn.GetMany(keys)
	if err != nil {
		return nil, err
	}
	for i, raw := range raws {
		if raw == nil {
			continue
		}
		r, err := rd.sharedRecord(string(keys[i]), ids[i], raw, keep)
		if err != nil {
			return nil, err
		}
		out[i] = r
	}
	return out, nil
}

// getBatch is the largest number of records getAll reads at once where a caller would read
// more (a candidate set): it bounds one statement's parameters and the bytes held at once.
const getBatch = 256

// pageReads buffers the ids of a walk that stops after want matches, and reads them with
// getAll when as many are pending as matches are missing: the walk reads the records one get
// per id would, in fewer round trips on a shared store.
type pageReads struct {
	rd            *recReader
	project, coll string
	ids           []string
}

// add queues id; full reports that need ids are pending, so flush should run.
func (pr *pageReads) add(id string, need int) (full bool) {
	pr.ids = append(pr.ids, id)
	return len(pr.ids) >= max(1, min(need, getBatch))
}

// flush reads the pending records, in the order they were added, and empties the queue.
func (pr *pageReads) flush() ([]*record, error) {
	if len(pr.ids) == 0 {
		return nil, nil
	}
	recs, err := pr.rd.getAll(pr.project, pr.coll, pr.ids)
	pr.ids = pr.ids[:0]
	return recs, err
}
