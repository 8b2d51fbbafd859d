package main

import (
	"context"

	"github.com/gatehouse-dev/gatehouse/edge/admin"
	"github.com/gatehouse-dev/gatehouse/edge/cmd/gatehouse/internal/ports"
	"github.com/gatehouse-dev/gatehouse/edge/module"
	"github.com/gatehouse-dev/gatehouse/edge/store"
	"github.com/gatehouse-dev/gatehouse/products/email"
	"github.com/gatehouse-dev/gatehouse/products/files"
	"github.com/gatehouse-dev/gatehouse/products/forms"
	"github.com/gatehouse-dev/gatehouse/products/membership"
	"github.com/gatehouse-dev/gatehouse/products/records"
)

// products are the product modules in build order, each its package's Build: adding a product
// is its package and one line here (edge's TestProductsWiredAlike checks that every products/*
// package is named once). Email comes before forms: forms' Mailer is adapted over the service
// email provides.
func products() []module.Builder {
	return []module.Builder{
		email.Build,
		files.Build,
		membership.Build,
		forms.Build,
		records.Build,
	}
}

// addProducts builds every product module and adds what it gives to the assembly: its routes,
// its section of the tenants document, its components, closers and overview part, and its
// legacy converters for the migrate step.
func (a *assembly) addProducts(ctx context.Context, d *deps) error {
	for _, build := range products() {
		m, err := build(ctx, a.moduleDeps(d))
		if err != nil {
			return err
		}
		a.closers = append(a.closers, m.Closers...)
		if m.Owner != nil {
			if err := d.tenancy.Add(m.Owner); err != nil {
				return err
			}
		}
		a.products = append(a.products, m.API...)
		a.components = append(a.components, m.Components...)
		if m.Overview != nil {
			read := m.Overview
			a.overview = append(a.overview, admin.OverviewPart{Name: m.Name, Read: func(ctx context.Context, q admin.OverviewQuery) (any, error) {
				return read(ctx, q.Org, q.Project, q.Since)
			}})
		}
		a.legacy = append(a.legacy, m.Legacy...)
		a.provided = append(a.provided, m.Provides...)
	}
	return nil
}

// moduleDeps are what a product is built from, with the ports main adapts for the products
// (internal/ports): the webhook events, the plugin hooks, and forms' Mailer over the service
// the email module provided.
func (a *assembly) moduleDeps(d *deps) module.Deps {
	return module.Deps{Config: d.cfg, DB: d.db, Log: d.log, Registerer: d.reg, Tenancy: d.tenancy, Auth: d.auth,
		Cursors: d.cursors, Blobs: d.blobs, Egress: d.egress, Memory: d.mem, Node: d.node,
		Shared: d.db.Backend() == store.BackendPostgres, Limiter: d.sharedLimiter, Ports: ports.For(d.hooks, d.plugins, a.provided)}
}
