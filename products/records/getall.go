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
	b := recPrefix(project, coll)
	n := len(b)
	keys := make([]string, len(ids))
	for i, id := range ids {
		b = append(b[:n], id...)
		keys[i] = string(b)
	}
	return rd.readKeys(keys, n, keep)
}

// readKeys is readAll of the records stored at keys, each the collection's record prefix (n
// bytes long) and an id: one allocation per record where building each key from its parts
// takes three.
func (rd *recReader) readKeys(keys []string, n int, keep bool) ([]*record, error) {
	out := make([]*record, len(keys))
	if !rd.s.shared {
		for i, k := range keys {
			r, err := rd.getKey(k, k[n:], keep)
			if err != nil {
				return nil, err
			}
			out[i] = r
		}
		return out, nil
	}
	bkeys := make([][]byte, len(keys))
	for i, k := range keys {
		bkeys[i] = []byte(k)
	}
	raws, err := rd.txn.GetMany(bkeys)
	if err != nil {
		return nil, err
	}
	for i, raw := range raws {
		if raw == nil {
			continue
		}
		r, err := rd.sharedRecord(keys[i], keys[i][n:], raw, keep)
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
// per id would, in fewer round trips on a shared store. It queues record keys (the
// collection's record prefix, then the id), built once per id.
type pageReads struct {
	rd   *recReader
	key  []byte // the record prefix, then the id added last
	n    int    // the record prefix's length
	keys []string
}

func newPageReads(rd *recReader, project, coll string) *pageReads {
	k := recPrefix(project, coll)
	return &pageReads{rd: rd, key: k, n: len(k)}
}

// add queues id; full reports that need ids are pending, so flush should run.
func (pr *pageReads) add(id string, need int) (full bool) {
	pr.key = append(pr.key[:pr.n], id...)
	return pr.queue(need)
}

// addBytes is add of an id the caller may reuse.
func (pr *pageReads) addBytes(id []byte, need int) (full bool) {
	pr.key = append(pr.key[:pr.n], id...)
	return pr.queue(need)
}

func (pr *pageReads) queue(need int) bool {
	pr.keys = append(pr.keys, string(pr.key))
	return len(pr.keys) >= max(1, min(need, getBatch))
}

// flush reads the pending records, in the order they were added, and empties the queue.
func (pr *pageReads) flush() ([]*record, error) {
	if len(pr.keys) == 0 {
		return nil, nil
	}
	recs, err := pr.rd.readKeys(pr.keys, pr.n, true)
	pr.keys = pr.keys[:0]
	return recs, err
}
