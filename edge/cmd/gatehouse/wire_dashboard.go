package main

import (
	"context"

	"github.com/gatehouse-dev/gatehouse/edge/admin"
	"github.com/gatehouse-dev/gatehouse/edge/dashboard"
)

// addDashboard mounts the dashboard app at {public_url}/dashboard/ (its files are embedded),
// and the overview route its first page reads, composed from the products' parts.
func (a *assembly) addDashboard(_ context.Context, d *deps) error {
	a.admin = append(a.admin, admin.NewOverview(admin.OverviewOptions{Tenancy: d.tenancy, Parts: a.overview}))
	h, err := dashboard.New(dashboard.Options{PublicURL: d.cfg.PublicURL, AssetURL: d.cfg.AssetBaseURL()})
	if err != nil {
		return err
	}
	a.products = append(a.products, h)
	return nil
}
