package records

import (
	"bytes"
	"net/http"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/utils"

	"github.com/gatehouse-dev/gatehouse/edge"
	"github.com/gatehouse-dev/gatehouse/edge/apierr"
	"github.com/gatehouse-dev/gatehouse/edge/apikey"
	"github.com/gatehouse-dev/gatehouse/edge/auth"
	"github.com/gatehouse-dev/gatehouse/edge/cursor"
	"github.com/gatehouse-dev/gatehouse/edge/httpx"
)

// API mounts the records routes under {records_base_url} and the record write routes
// under /admin/v1.
type API struct {
	svc     *Service
	auth    *auth.Authenticator
	cursors *cursor.Cursors
}

var (
	_ edge.Product      = (*API)(nil)
	_ edge.AdminProduct = (*API)(nil)
)

// NewAPI returns the records routes over svc, guarding them with a; cursors signs the lists'
// page cursors.
func NewAPI(svc *Service, a *auth.Authenticator, cursors *cursor.Cursors) *API {
	return &API{svc: svc, auth: a, cursors: cursors}
}

// Segment is the product's path segment.
func (p *API) Segment() string { return "records" }

const collPath = "/projects/:project/collections/:collection"

// Mount registers the read routes: collection definition, list, one record, aggregate.
func (p *API) Mount(r fiber.Router) {
	rule := auth.Rule{Product: "records"}
	p.auth.Handle(r, http.MethodGet, collPath, rule, p.definition)
	p.auth.Handle(r, http.MethodGet, collPath+"/records", rule, p.list)
	p.auth.Handle(r, http.MethodGet, collPath+"/records/:id", rule, p.get)
	p.auth.Handle(r, http.MethodGet, collPath+"/aggregate", rule, p.aggregate)
}

// MountAdmin registers the record writes of decisions.md section 4 and the dashboard's reads:
// the project's collections and every record of one, unpublished ones included.
func (p *API) MountAdmin(r fiber.Router) {
	r.Get("/projects/:project/collections", p.collections)
	r.Get(collPath+"/records", p.adminList)
	r.Post(collPath+"/records\\:import", p.importRecords)
	r.Post(collPath+"/records", p.put)
	r.Put(collPath+"/records/:id", p.put)
	r.Delete(collPath+"/records/:id", p.delete)
	r.Post(collPath+"/records/:id/publish", p.publish(true))
	r.Post(collPath+"/records/:id/unpublish", p.publish(false))
}

// target is the project and collection of a request the key may see.
type target struct {
	project, collection string
	secret              bool
}

// scope checks the key against the project in the path: a key of another project or org gets
// 404 PROJECT_NOT_FOUND, never the data.
func (p *API) scope(c *fiber.Ctx) (target, error) {
	t := target{project: utils.CopyString(c.Params("project")), collection: utils.CopyString(c.Params("collection"))}
	info, err := p.svc.Project(c.UserContext(), t.project)
	if err != nil {
		return t, err
	}
	if k := auth.KeyOf(c); k != nil {
		if !k.SeesProject(info.Org, t.project) {
			return t, ErrProjectNotFound
		}
		t.secret = k.Kind == apikey.Secret
	} else {
		t.secret = true // admin routes
	}
	return t, nil
}

func sendJSON(c *fiber.Ctx, status int, body []byte) error {
	c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSON)
	return c.Status(status).Send(body)
}

func (p *API) definition(c *fiber.Ctx) error {
	t, err := p.scope(c)
	if err != nil {
		return err
	}
	body, err := p.svc.Definition(c.UserContext(), t.project, t.collection, t.secret)
	if err != nil {
		return err
	}
	return sendJSON(c, fiber.StatusOK, body)
}

func filters(c *fiber.Ctx) []string {
	var out []string
	for _, v := range c.Context().QueryArgs().PeekMulti("filter") {
		out = append(out, string(v))
	}
	return out
}

func (p *API) list(c *fiber.Ctx) error {
	t, err := p.scope(c)
	if err != nil {
		return err
	}
	limit, err := httpx.QueryInt(c, "limit", 25, 1, 100)
	if err != nil {
		return err
	}
	scope := cursorScope("records", t)
	after, err := p.after(c, scope)
	if err != nil {
		return err
	}
	page, err := p.svc.List(c.UserContext(), Query{
		Project: t.project, Collection: t.collection, Secret: t.secret,
		Filters: filters(c), Q: utils.CopyString(c.Query("q")), Sort: utils.CopyString(c.Query("sort")),
		Limit: limit, After: after,
		Populate: utils.CopyString(c.Query("populate")), Fields: utils.CopyString(c.Query("fields")),
	})
	if err != nil {
		return err
	}
	return httpx.WriteRawList(c, page.Items, p.next(scope, page.Next))
}

// cursorScope binds a list's cursors to the list (kind), the project and the collection; the
// position inside binds itself to the query's filters, q, sort and key kind (Page.Next).
func cursorScope(kind string, t target) string {
	return kind + "\x00" + t.project + "\x00" + t.collection
}

// after checks the request's cursor and returns the position it carries (nil: none).
func (p *API) after(c *fiber.Ctx, scope string) ([]byte, error) {
	cur := c.Query("cursor")
	if cur == "" {
		return nil, nil
	}
	return p.cursors.Decode(scope, cur)
}

// next signs the position after a page into its cursor ("" on the last page).
func (p *API) next(scope string, pos []byte) string {
	if pos == nil {
		return ""
	}
	return p.cursors.Encode(scope, pos)
}

func (p *API) get(c *fiber.Ctx) error {
	t, err := p.scope(c)
	if err != nil {
		return err
	}
	body, err := p.svc.Get(c.UserContext(), t.project, t.collection, utils.CopyString(c.Params("id")), t.secret,
		utils.CopyString(c.Query("populate")), utils.CopyString(c.Query("fields")))
	if err != nil {
		return err
	}
	return sendJSON(c, fiber.StatusOK, body)
}

func (p *API) aggregate(c *fiber.Ctx) error {
	t, err := p.scope(c)
	if err != nil {
		return err
	}
	if v := c.Query("count"); v != "" && v != "true" {
		return validation("count", "must be true when given")
	}
	for _, name := range []string{"groupBy", "distinct"} {
		if c.Context().QueryArgs().Has(name) && c.Query(name) == "" {
			return validation(name, "must name a field when given")
		}
	}
	body, err := p.svc.Aggregate(c.UserContext(), AggregateQuery{
		Project: t.project, Collection: t.collection, Secret: t.secret, Filters: filters(c),
		Q: utils.CopyString(c.Query("q")), GroupBy: utils.CopyString(c.Query("groupBy")),
		Distinct: utils.CopyString(c.Query("distinct")),
	})
	if err != nil {
		return err
	}
	return sendJSON(c, fiber.StatusOK, body)
}

func (p *API) put(c *fiber.Ctx) error {
	t, err := p.scope(c)
	if err != nil {
		return err
	}
	var in WriteRecord
	if err := httpx.DecodeJSON(c, &in, apierr.CodeValidationFailed); err != nil {
		return err
	}
	if id := c.Params("id"); id != "" {
		if in.ID != "" && in.ID != id {
			return validation("id", "differs from the id in the path")
		}
		in.ID = utils.CopyString(id)
	}
	body, created, err := p.svc.Put(c.UserContext(), t.project, t.collection, in)
	if err != nil {
		return err
	}
	status := fiber.StatusOK
	if created {
		status = fiber.StatusCreated
	}
	return sendJSON(c, status, body)
}

func (p *API) delete(c *fiber.Ctx) error {
	t, err := p.scope(c)
	if err != nil {
		return err
	}
	if err := p.svc.Delete(c.UserContext(), t.project, t.collection, utils.CopyString(c.Params("id"))); err != nil {
		return err
	}
	return c.SendStatus(fiber.StatusNoContent)
}

func (p *API) publish(published bool) fiber.Handler {
	return func(c *fiber.Ctx) error {
		t, err := p.scope(c)
		if err != nil {
			return err
		}
		body, err := p.svc.SetPublished(c.UserContext(), t.project, t.collection, utils.CopyString(c.Params("id")), published)
		if err != nil {
			return err
		}
		return sendJSON(c, fiber.StatusOK, body)
	}
}

// importRecords streams the NDJSON body when the server streams request bodies
// (fiber StreamRequestBody); otherwise it reads the buffered body.
func (p *API) importRecords(c *fiber.Ctx) error {
	t, err := p.scope(c)
	if err != nil {
		return err
	}
	body := c.Context().RequestBodyStream()
	if body == nil {
		body = bytes.NewReader(c.Body())
	}
	rep, err := p.svc.Import(c.UserContext(), t.project, t.collection, body)
	if err != nil {
		return err
	}
	return c.JSON(rep)
}
