package records

import (
	"encoding/json"
	"time"

	"github.com/gatehouse-dev/gatehouse/edge/legacy"
	"github.com/gatehouse-dev/gatehouse/edge/store"
)

// LegacyConverters move the collections and document records of tenancy's old layout
// (legacy.Migrate) to this product's keys. A record keeps its createdAt, updatedAt and
// published, and is written to the store with its indexes and counters as an apply writes it
// (replacing the copy the old release mirrored into the store). A record whose collection is gone
// is dropped, as the old release's prune would have.
func LegacyConverters() []legacy.Converter {
	return []legacy.Converter{
		{Kind: "collection", Parts: 2, Move: func(txn *store.Txn, p []string, v []byte) error {
			return legacy.Move(txn, collKey(p[0], p[1]), v, &Collection{}) // stored without records
		}},
		// After the collections: a record is written with its collection's indexes.
		{Kind: "record", Parts: 3, Move: legacyRecord},
	}
}

// legacyRecord moves tenancy/record/<project>/<collection>/<id>.
func legacyRecord(txn *store.Txn, p []string, v []byte) error {
	project, coll := p[0], p[1]
	sch, err := schemaIn(txn, project, coll)
	if err != nil || sch == nil {
		return err
	}
	k := docKey(project, coll, p[2])
	if ok, err := txn.Has(k); err != nil || ok {
		return err
	}
	var dc docCopy
	if err := json.Unmarshal(v, &dc); err != nil {
		return err
	}
	if dc.Data == nil {
		dc.Data = map[string]any{} // as the apply stores it
	}
	raw, err := json.Marshal(dc)
	if err != nil {
		return err
	}
	if err := txn.Set(k, raw); err != nil {
		return err
	}
	created, _ := time.Parse(time.RFC3339Nano, dc.CreatedAt)
	updated, _ := time.Parse(time.RFC3339Nano, dc.UpdatedAt)
	tw := newTxWriter(txn, 0) // a one-time conversion: any stripe counts right (counters.go)
	if _, err := tw.put(project, coll, sch, buildRecord(sch, dc.ID, dc.Published, dc.Data, created, updated)); err != nil {
		return err
	}
	return tw.flush()
}
