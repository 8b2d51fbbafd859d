package admin

import (
	"context"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/utils"

	"github.com/gatehouse-dev/gatehouse/edge/apierr"
	"github.com/gatehouse-dev/gatehouse/edge/tenancy"
)

// OverviewDays is how many days the overview's daily figures cover, today included.
const OverviewDays = 14

// OverviewQuery is what a part of the overview is asked: the project (with its org) and the
// first day (YYYY-MM-DD, UTC) its daily figures count from.
type OverviewQuery struct {
	Org, Project, Since string
}

// OverviewPart is one product's share of a project's overview: its figures under Name. The
// composition root adapts each product to one (products never import each other, nor this).
type OverviewPart struct {
	Name string
	Read func(ctx context.Context, q OverviewQuery) (any, error)
}

// OverviewOptions configures NewOverview.
type OverviewOptions struct {
	// Tenancy tells the project's org and that it exists (required).
	Tenancy *tenancy.Service
	// Parts are the products' shares, each answered under its name.
	Parts []OverviewPart
	// Now is the clock (time.Now when nil).
	Now func() time.Time
}

// Overview serves GET /projects/{project}/overview: the dashboard's first page (decisions.md
// 9.6), composed from the products' own counts.
type Overview struct {
	o OverviewOptions
}

// NewOverview returns the overview route over the parts. It starts nothing.
func NewOverview(o OverviewOptions) *Overview {
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Overview{o: o}
}

// MountAdmin registers GET /projects/{project}/overview.
func (v *Overview) MountAdmin(r fiber.Router) {
	r.Get("/projects/:project/overview", v.get)
}

// Days returns the OverviewDays days (YYYY-MM-DD, UTC) ending with the day of now, oldest first.
func Days(now time.Time) []string {
	now = now.UTC()
	out := make([]string, OverviewDays)
	for i := range out {
		out[i] = now.AddDate(0, 0, i-(OverviewDays-1)).Format(time.DateOnly)
	}
	return out
}

// get answers {"project","days":[...],<part name>: <its figures>,...}.
func (v *Overview) get(c *fiber.Ctx) error {
	project := utils.CopyString(c.Params("project"))
	info, err := v.o.Tenancy.Project(c.UserContext(), project)
	if err != nil {
		return apierr.New(404, apierr.CodeNotFound, "no such project", err)
	}
	days := Days(v.o.Now())
	q := OverviewQuery{Org: info.Org, Project: project, Since: days[0]}
	out := fiber.Map{"project": project, "days": days}
	for _, p := range v.o.Parts {
		fig, err := p.Read(c.UserContext(), q)
		if err != nil {
			return err
		}
		out[p.Name] = fig
	}
	return c.JSON(out)
}
