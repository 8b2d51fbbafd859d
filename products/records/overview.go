package records

import (
	"context"
	"encoding/json"

	"github.com/gatehouse-dev/gatehouse/edge/store"
)

// CollectionCount is one collection of a project's overview: its records, drafts included.
type CollectionCount struct {
	Name    string `json:"name"`
	Records int    `json:"records"`
}

// Overview is the records part of a project's overview (the dashboard's first page).
type Overview struct {
	Collections []CollectionCount `json:"collections"`
}

// Overview counts the records of each collection of a project (published and drafts), in
// collection name order. It reads every record key of the project: a dashboard read, not a hot
// path.
func (s *Service) Overview(ctx context.Context, project string) (Overview, error) {
	out := Overview{Collections: []CollectionCount{}}
	err := s.db.View(ctx, func(txn *store.Txn) error {
		var names []string
		err := txn.Iterate(store.IterOptions{Prefix: store.Prefix(root, "c", project)}, func(_, v []byte) (bool, error) {
			var c Collection
			if err := json.Unmarshal(v, &c); err != nil {
				return false, err
			}
			names = append(names, c.Name)
			return true, nil
		})
		if err != nil {
			return err
		}
		for _, name := range names {
			n := 0
			err := txn.Iterate(store.IterOptions{Prefix: recPrefix(project, name), KeysOnly: true}, func(_, _ []byte) (bool, error) {
				n++
				return true, nil
			})
			if err != nil {
				return err
			}
			out.Collections = append(out.Collections, CollectionCount{Name: name, Records: n})
		}
		return nil
	})
	return out, err
}
