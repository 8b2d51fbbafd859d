package records

import (
	"context"
)

// Query is a record list request, with the raw parameters of the interface.
type Query struct {
	Project, Collection string
	// Secret is true for a secret key: private fields are read, filtered and sorted.
	Secret   bool
	Filters  []string
	Q        string
	Sort     string
	Limit    int
	Cursor   string
	Populate string
	Fields   string
}

// Page is one page of rendered records and the cursor of the next ("" on the last page).
type Page struct {
	Items [][]byte
	Next  string
}

// List runs a list query.
func (s *Service) List(ctx context.Context, q Query) (Page, error) {
	sch, err := s.readable(ctx, q.Project, q.Collection, q.Secret)
	if err != nil {
		return Page{}, err
	}
	c, err := compile(sch, q.Secret, q.Filters, q.Q, q.Sort)
	if err != nil {
		return Page{}, err
	}
	if len(c.words) > 0 {
		if err := s.awaitTitles(ctx); err != nil {
			return Page{}, err
		}
	}
	limit := q.Limit
	if limit <= 0 {
		limit = 25
	}
	after, err := s.cursorAfter(c, q.Cursor)
	if err != nil {
		return Page{}, err
	}
	out, err := s.newOutput(ctx, sch, q.Secret, q.Populate, q.Fields)
	if err != nil {
		return Page{}, err
	}
	var page Page
	err = s.viewColl(ctx, sch, func(rd *recReader) error {
		if err := rd.resolveAfter(c, after); err != nil {
			return err
		}
		st, err := s.readStats(rd, c, true)
		if err != nil {
			return err
		}
		recs, err := s.collect(ctx, rd, planList(c, st, limit, after))
		if err != nil {
			return err
		}
		if len(recs) > limit {
			recs = recs[:limit]
			page.Next = s.cursors.Encode(c.scope, encodeCursor(c.tupleOf(recs[len(recs)-1])))
		}
		page.Items, err = out.render(rd, recs)
		return err
	})
	if err != nil {
		return Page{}, err
	}
	page.Items, err = s.applyReadFilter(ctx, q.Project, q.Collection, page.Items)
	return page, err
}

// Get reads one published record.
func (s *Service) Get(ctx context.Context, project, coll, id string, secret bool, populate, fieldsSel string) ([]byte, error) {
	sch, err := s.readable(ctx, project, coll, secret)
	if err != nil {
		return nil, err
	}
	out, err := s.newOutput(ctx, sch, secret, populate, fieldsSel)
	if err != nil {
		return nil, err
	}
	var items [][]byte
	err = s.viewColl(ctx, sch, func(rd *recReader) error {
		r, err := rd.get(project, coll, id)
		if err != nil {
			return err
		}
		if r == nil || !r.published {
			return ErrRecordNotFound
		}
		items, err = out.render(rd, []*record{r})
		return err
	})
	if err != nil {
		return nil, err
	}
	items, err = s.applyReadFilter(ctx, project, coll, items)
	if err != nil {
		return nil, err
	}
	if len(items) == 0 {
		return nil, ErrRecordNotFound
	}
	return items[0], nil
}

// cursorAfter decodes a page cursor of c's scope and sort into the tuple the page starts
// after; nil for no cursor (the first page).
func (s *Service) cursorAfter(c *criteria, cursor string) (*tuple, error) {
	if cursor == "" {
		return nil, nil
	}
	payload, err := s.cursors.Decode(c.scope, cursor)
	if err != nil {
		return nil, err
	}
	t, err := decodeCursor(payload, len(c.sort))
	if err != nil {
		return nil, err
	}
	return &t, nil
}
