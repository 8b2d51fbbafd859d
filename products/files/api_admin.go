package files

import (
	"encoding/json"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/utils"

	"github.com/gatehouse-dev/gatehouse/edge/apierr"
	"github.com/gatehouse-dev/gatehouse/edge/auth"
	"github.com/gatehouse-dev/gatehouse/edge/httpx"
)

// MountAdmin adds the dashboard's asset routes (pending and private assets included):
// GET /admin/v1/assets?org=&project=&limit=&cursor=&mimeCategory=, GET /admin/v1/assets/:id,
// PATCH (title, alt, tags) and DELETE (the bytes and variants go too) of one asset; the GET of
// one asset lists the variants made of it, and both GETs give each image its thumbnailUrl. A
// member's session sees only its own org's assets; another org's answer 404 ASSET_NOT_FOUND.
func (a *API) MountAdmin(r fiber.Router) {
	r.Get("/assets", a.adminList)
	r.Get("/assets/:id", a.adminGet)
	r.Patch("/assets/:id", httpx.BodyLimit(64<<10), a.adminEdit)
	r.Delete("/assets/:id", a.adminDelete)
}

func (a *API) adminList(c *fiber.Ctx) error {
	sc := Scope{Org: utils.CopyString(c.Query("org")), Project: utils.CopyString(c.Query("project"))}
	if sc.Org == "" {
		return apierr.Validation(apierr.FieldProblem{Field: "org", Problem: "is required"})
	}
	if err := auth.RequireOrg(c, sc.Org); err != nil {
		return err
	}
	return a.listScope(c, sc, true)
}

// adminAsset loads an asset the admin caller may see (ASSET_NOT_FOUND for another org's).
func (a *API) adminAsset(c *fiber.Ctx) (*Asset, error) {
	asset, err := a.svc.GetAny(c.UserContext(), utils.CopyString(c.Params("id")))
	if err != nil {
		return nil, err
	}
	if !auth.AdminOf(c).SeesOrg(asset.Org) {
		return nil, ErrAssetNotFound
	}
	return asset, nil
}

// adminGet answers the stored record with the variants made of it (decisions.md 9.3).
func (a *API) adminGet(c *fiber.Ctx) error {
	asset, err := a.adminAsset(c)
	if err != nil {
		return err
	}
	built, err := a.svc.Variants(c.UserContext(), asset.ID)
	if err != nil {
		return err
	}
	item, err := a.adminItem(c, asset)
	if err != nil {
		return err
	}
	return c.JSON(struct {
		adminItem
		Variants []Built `json:"variants"`
	}{item, built})
}

// adminItem is an asset as the admin API lists it: every stored field and the URL of its
// thumbnail for the dashboard's file list (omitted when it has none).
type adminItem struct {
	*Asset
	ThumbnailURL string `json:"thumbnailUrl,omitempty"`
}

func (a *API) adminItem(c *fiber.Ctx, x *Asset) (adminItem, error) {
	u, err := a.svc.ThumbnailURL(c.UserContext(), x)
	return adminItem{x, u}, err
}

// visibleTo returns the org check of the admin caller of c for the service.
func visibleTo(c *fiber.Ctx) func(org string) bool {
	adm := auth.AdminOf(c)
	return adm.SeesOrg
}

// adminEdit answers PATCH /assets/{id} with {"title"?, "alt"?, "tags"?}: absent fields stay,
// null clears title or alt (tags: null or [] empties them). The answer is the asset.
func (a *API) adminEdit(c *fiber.Ctx) error {
	m, err := fields(c)
	if err != nil {
		return err
	}
	var e Edit
	var probs []apierr.FieldProblem
	for k, raw := range m {
		isNull := string(raw) == "null"
		switch k {
		case "title", "alt":
			var v *string
			if !isNull {
				v = new(string)
				if err := json.Unmarshal(raw, v); err != nil {
					probs = append(probs, apierr.FieldProblem{Field: k, Problem: "must be a string or null"})
				}
			}
			if k == "title" {
				e.SetTitle, e.Title = true, v
			} else {
				e.SetAlt, e.Alt = true, v
			}
		case "tags":
			e.SetTags = true
			if !isNull && json.Unmarshal(raw, &e.Tags) != nil {
				probs = append(probs, apierr.FieldProblem{Field: "tags", Problem: "must be an array of strings"})
			}
		default:
			probs = append(probs, apierr.FieldProblem{Field: k, Problem: "is not editable (title, alt, tags)"})
		}
	}
	if len(probs) > 0 {
		return apierr.Validation(probs...)
	}
	asset, err := a.svc.EditAsset(c.UserContext(), utils.CopyString(c.Params("id")), e, visibleTo(c))
	if err != nil {
		return err
	}
	return c.JSON(asset)
}

func (a *API) adminDelete(c *fiber.Ctx) error {
	if err := a.svc.DeleteAsset(c.UserContext(), utils.CopyString(c.Params("id")), visibleTo(c)); err != nil {
		return err
	}
	return c.SendStatus(fiber.StatusNoContent)
}
