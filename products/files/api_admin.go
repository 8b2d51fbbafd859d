package files

import (
	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/utils"

	"github.com/gatehouse-dev/gatehouse/edge/apierr"
	"github.com/gatehouse-dev/gatehouse/edge/auth"
)

// MountAdmin adds the dashboard's asset routes (pending and private assets included):
// GET /admin/v1/assets?org=&project=&limit=&cursor=&mimeCategory= and GET /admin/v1/assets/:id.
// A member's session sees only its own org's assets; another org's answer 404.
func (a *API) MountAdmin(r fiber.Router) {
	r.Get("/assets", a.adminList)
	r.Get("/assets/:id", a.adminGet)
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

func (a *API) adminGet(c *fiber.Ctx) error {
	asset, err := a.adminAsset(c)
	if err != nil {
		return err
	}
	return c.JSON(asset)
}
