package records

import (
	"context"
	"encoding/json"

	"github.com/gatehouse-dev/gatehouse/edge/store"
)

// AdminQuery is the dashboard's record list: every record of a collection, published or not,
// optionally narrowed by filters and q and ordered by sort, in the public list's syntax (read
// as a secret key).
type AdminQuery struct {
	Project, Collection string
	Filters             []string
	Q, Sort             string
	Limit               int // 25 when <= 0
	// After is the previous page's Next (see Query.After).
	After []byte
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
// (the secret projection plus "published"). Filters, q and sort are the public list's, read as
// a secret key (private fields allowed); the order is sort's, createdAt ascending by default.
// The indexes hold published records only, so the list reads every record of the collection
// (a dashboard page, not a hot path); its cursors are valid for the admin list alone.
func (s *Service) AdminList(ctx context.Context, q AdminQuery) (Page, error) {
	sch, err := s.Schema(ctx, q.Project, q.Collection)
	if err != nil {
		return Page{}, err
	}
	c, err := compile(sch, true, q.Filters, q.Q, q.Sort)
	if err != nil {
		return Page{}, err
	}
	c.drafts = true
	c.scope = "records-admin\x00" + c.scope
	if q.Limit <= 0 {
		q.Limit = 25
	}
	after, err := cursorAfter(c, q.After)
	if err != nil {
		return Page{}, err
	}
	p := &plan{criteria: c, access: stream, limit: q.Limit, after: after}
	var page Page
	err = s.view(ctx, func(rd *recReader) error {
		if err := rd.resolveAfter(c, after); err != nil {
			return err
		}
		recs, err := s.stream(ctx, rd, p, q.Limit+1)
		if err != nil {
			return err
		}
		if len(recs) > q.Limit {
			recs = recs[:q.Limit]
			page.Next = position(c, recs[len(recs)-1])
		}
		for _, r := range recs {
			page.Items = append(page.Items, adminJSON(r))
		}
		return nil
	})
	return page, err
}
