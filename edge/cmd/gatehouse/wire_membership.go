package main

import (
	"context"

	"github.com/gatehouse-dev/gatehouse/products/membership"
)

// addMembership wires the Membership product: GET {public_url}/membership/config, answered
// from a per-project cache that every committed tenancy change invalidates.
func (a *assembly) addMembership(_ context.Context, d *deps) error {
	svc, err := membership.NewService(membership.Options{DB: d.db, Notify: d.tenancy})
	if err != nil {
		return err
	}
	if err := d.tenancy.Add(svc); err != nil {
		return err
	}
	a.products = append(a.products, membership.NewAPI(svc, d.auth))
	return nil
}
