package records

import (
	"bytes"
	"context"
	"crypto/sha256"

	"github.com/gatehouse-dev/gatehouse/edge/apierr"
)

// Query is a record list request, with the raw parameters of the interface.
type Query struct {
	Project, Collection string
	// Secret is true for a secret key: private fields are read, filtered and sorted.
	Secret  bool
	Filters []string
	Q       string
	Sort    string
	Limit   int
	// After is the previous page's Next, from a cursor the handler checked (nil: the first
	// page). A position of another query is refused with apierr.ErrInvalidCursor.
	After    []byte
	Populate string
	Fields   string
}

// Page is one page of rendered records and the position after it (nil on the last page),
// which the handler signs into the next page's cursor as the other products' handlers do.
type Page struct {
	Items [][]byte
	Next  []byte
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
	after, err := cursorAfter(c, q.After)
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
			page.Next = position(c, recs[len(recs)-1])
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

// A page position binds itself to its query: it starts with a digest of the criteria's scope
// (the filters, q, sort and key kind it was made for), so the handler's cursor, which binds
// the route, project and collection, needs no knowledge of the query language.
const scopeDigestLen = 8

func scopeDigest(scope string) []byte {
	sum := sha256.Sum256([]byte(scope))
	return sum[:scopeDigestLen]
}

// position is the page position after r in the list c describes (Page.Next).
func position(c *criteria, r *record) []byte {
	return append(scopeDigest(c.scope), encodeCursor(c.tupleOf(r))...)
}

// cursorAfter reads a page position of c's scope and sort into the tuple the page starts
// after; nil for none (the first page).
func cursorAfter(c *criteria, after []byte) (*tuple, error) {
	if len(after) == 0 {
		return nil, nil
	}
	if len(after) < scopeDigestLen || !bytes.Equal(after[:scopeDigestLen], scopeDigest(c.scope)) {
		return nil, apierr.ErrInvalidCursor
	}
	t, err := decodeCursor(after[scopeDigestLen:], len(c.sort))
	if err != nil {
		return nil, err
	}
	return &t, nil
}
