package records

import (
	"context"
	"errors"
	"time"

	"github.com/gatehouse-dev/gatehouse/edge/store"
	"github.com/gatehouse-dev/gatehouse/edge/tenancy"
)

// syncTenancy mirrors the records of a tenants document apply into the product's store, inside
// the apply's transaction (TxHook) or after it (OnChange, used by tests).
func (s *Service) syncTenancy(ctx context.Context, txn *store.Txn, changes []tenancy.Change) error {
	defs := map[string]*Schema{}
	for _, c := range changes {
		if c.Kind == "collection" && c.New != nil {
			var col tenancy.Collection
			if err := jsonUnmarshal(c.New, &col); err != nil {
				return err
			}
			project, _, _ := cutPath(c.Path)
			defs[project+"/"+col.Name] = compileSchema(project, col)
		}
	}
	w := newTxWriter(txn)
	for _, c := range changes {
		if c.Kind != "record" {
			continue
		}
		project, coll, id := cutPath(c.Path)
		sch := defs[project+"/"+coll]
		if sch == nil {
			var err error
			sch, err = s.Schema(ctx, project, coll)
			if err != nil && (!errors.Is(err, ErrCollectionNotFound) || c.Op != "deleted" && c.New != nil) {
				return err
			}
		}
		if c.Op == "deleted" || c.New == nil {
			if _, err := w.del(project, coll, sch, id); err != nil {
				return err
			}
			continue
		}
		var sr tenancy.StoredRecord
		if err := jsonUnmarshal(c.New, &sr); err != nil {
			return err
		}
		created, _ := time.Parse(time.RFC3339Nano, sr.CreatedAt)
		updated, _ := time.Parse(time.RFC3339Nano, sr.UpdatedAt)
		if _, err := w.put(project, coll, sch, buildRecord(sch, sr.ID, sr.Published, sr.Data, created, updated)); err != nil {
			return err
		}
	}
	return w.flush()
}

// cutPath splits "<project>/<collection>/<id>" (or fewer parts).
func cutPath(p string) (project, coll, id string) {
	parts := [3]string{}
	i := 0
	start := 0
	for j := 0; j < len(p) && i < 2; j++ {
		if p[j] == '/' {
			parts[i] = p[start:j]
			i++
			start = j + 1
		}
	}
	parts[i] = p[start:]
	return parts[0], parts[1], parts[2]
}

// TxHook returns the tenancy hook that keeps this store in step with tenants document applies,
// in the same transaction. Wire it in tenancy.Options.Hooks and also register Listener.
func (s *Service) TxHook() tenancy.TxHook {
	return func(txn *store.Txn, changes []tenancy.Change) error {
		return s.syncTenancy(context.Background(), txn, changes)
	}
}

// Listener returns the tenancy OnChange function: it invalidates caches, re-indexes
// collections whose fields changed, drops deleted collections and brings the title index up to
// date. With syncRecords it also mirrors record changes (when TxHook is not wired, as in tests).
func (s *Service) Listener(syncRecords bool) func(ctx context.Context, changes []tenancy.Change) {
	return func(ctx context.Context, changes []tenancy.Change) {
		for _, c := range changes {
			switch c.Kind {
			case "org", "project", "collection":
				s.purgeCaches()
			}
		}
		var keys []string
		for _, c := range changes {
			if c.Kind == "record" {
				project, coll, id := cutPath(c.Path)
				keys = append(keys, string(recKey(project, coll, id)))
			}
		}
		defer s.invalidate(keys)
		if syncRecords {
			if err := s.db.Update(ctx, func(txn *store.Txn) error { return s.syncTenancy(ctx, txn, changes) }); err != nil {
				s.log.Error("records: mirror tenants records", "err", err)
			}
		}
		for _, c := range changes {
			if c.Kind != "collection" {
				continue
			}
			project, coll, _ := cutPath(c.Path)
			var err error
			switch {
			case c.Op == "deleted":
				err = s.dropCollection(ctx, project, coll)
			case c.Op == "updated" && fieldsChanged(c.Old, c.New):
				err = s.rebuildCollection(ctx, project, coll)
			}
			if err != nil {
				s.log.Error("records: follow collection change", "collection", c.Path, "err", err)
			}
		}
		s.drainTitles(ctx)
	}
}

func fieldsChanged(oldRaw, newRaw []byte) bool {
	var a, b struct {
		Fields []tenancy.CollectionField `json:"fields"`
	}
	if jsonUnmarshal(oldRaw, &a) != nil || jsonUnmarshal(newRaw, &b) != nil {
		return true
	}
	x, _ := jsonMarshal(a.Fields)
	y, _ := jsonMarshal(b.Fields)
	return string(x) != string(y)
}
