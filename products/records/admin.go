package records

import (
	"context"
	"encoding/json"

	"github.com/gatehouse-dev/gatehouse/edge/store"
)

// AdminQuery is the dashboard's record list: every record of a collection, published or not,
// in id order, optionally narrowed by filters of the public list's syntax (read as a secret key).
type AdminQuery struct {
	Project, Collection string
	Filters             []string
	Limit               int // 25 when <= 0
	Cursor              string
}

// Collections returns the definitions (name, public flag, every field) of a project's
// collections in name order, as the admin view of the collection-definition read.
func (s *Service) Collections(ctx context.Context, project string) ([][]byte, error) {
	var out [][]byte
	err := s.db.View(ctx, func(txn *store.Txn) error {
		return txn.Iterate(store.IterOptions{Prefix: store.Prefix(root, "c", project)}, func(_, v []byte) (bool, error) {
			var c Collection
			if err := json.Unmarshal(v, &c); err != nil {
				return false, err
			}
			b, err := compileSchema(project, c).definitionJSON(true)
			out = append(out, b)
			return err == nil, err
		})
	})
	return out, err
}

// AdminList lists a collection's records, unpublished ones included, each in the admin view
// (the secret projection plus "published"). The cursor carries the last id of the page.
func (s *Service) AdminList(ctx context.Context, q AdminQuery) (Page, error) {
	sch, err := s.Schema(ctx, q.Project, q.Collection)
	if err != nil {
		return Page{}, err
	}
	fs := make([]Filter, 0, len(q.Filters))
	for _, raw := range q.Filters {
		f, err := compileFilter(sch, raw, true)
		if err != nil {
			return Page{}, err
		}
		fs = append(fs, f)
	}
	scope := "records-admin\x00" + q.Project + "\x00" + q.Collection
	for _, raw := range q.Filters {
		scope += "\x00" + raw
	}
	if q.Limit <= 0 {
		q.Limit = 25
	}
	prefix := recPrefix(q.Project, q.Collection)
	var start []byte
	if q.Cursor != "" {
		last, err := s.cursors.Decode(scope, q.Cursor)
		if err != nil {
			return Page{}, err
		}
		// The key after the last id: ids never hold a zero byte.
		start = append(append(append([]byte{}, prefix...), last...), 0)
	}
	var page Page
	var lastID string
	err = s.db.View(ctx, func(txn *store.Txn) error {
		return txn.Iterate(store.IterOptions{Prefix: prefix, Start: start}, func(k, v []byte) (bool, error) {
			id := string(k[len(prefix):])
			r, err := decodeRecord(id, append([]byte{}, v...))
			if err != nil {
				return false, err
			}
			for i := range fs {
				if !fs[i].match(r) {
					return true, nil
				}
			}
			if len(page.Items) == q.Limit {
				page.Next = s.cursors.Encode(scope, []byte(lastID))
				return false, nil
			}
			page.Items = append(page.Items, adminJSON(r))
			lastID = id
			return true, nil
		})
	})
	return page, err
}
