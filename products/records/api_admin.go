package records

import (
	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/utils"

	"github.com/gatehouse-dev/gatehouse/edge/httpx"
)

// collections answers the dashboard's collection picker.
func (p *API) collections(c *fiber.Ctx) error {
	t, err := p.scope(c)
	if err != nil {
		return err
	}
	items, err := p.svc.Collections(c.UserContext(), t.project)
	if err != nil {
		return err
	}
	return httpx.WriteRawList(c, items, "")
}

// adminList answers the dashboard's record list (unpublished records included), with the
// public list's filter, q and sort.
func (p *API) adminList(c *fiber.Ctx) error {
	t, err := p.scope(c)
	if err != nil {
		return err
	}
	limit, err := httpx.QueryInt(c, "limit", 25, 1, 100)
	if err != nil {
		return err
	}
	scope := cursorScope("records-admin", t)
	after, err := p.after(c, scope)
	if err != nil {
		return err
	}
	page, err := p.svc.AdminList(c.UserContext(), AdminQuery{Project: t.project, Collection: t.collection,
		Filters: filters(c), Q: utils.CopyString(c.Query("q")), Sort: utils.CopyString(c.Query("sort")),
		Limit: limit, After: after})
	if err != nil {
		return err
	}
	return httpx.WriteRawList(c, page.Items, p.next(scope, page.Next))
}
