package main

import (
	"context"

	"github.com/gatehouse-dev/gatehouse/edge/store"
	"github.com/gatehouse-dev/gatehouse/edge/webhooks"
)

// addWebhooks wires the webhook deliveries (decisions.md 8.3): the service products emit
// events to (through the adapters below; d.hooks for the later steps), its delivery worker
// and its admin routes.
func (a *assembly) addWebhooks(_ context.Context, d *deps) error {
	svc, err := webhooks.NewService(webhooks.Options{DB: d.db, Egress: d.egress,
		Log: d.log.With("component", "webhooks"), Registerer: d.reg, Tenancy: d.tenancy})
	if err != nil {
		return err
	}
	if err := d.tenancy.Add(svc); err != nil { // the project's webhooks section
		return err
	}
	a.admin = append(a.admin, webhooks.NewAPI(svc, d.cursors))
	a.components = append(a.components, svc.NewWorker(webhooks.WorkerOptions{
		PollInterval: d.cfg.Webhooks.PollInterval.D(), BaseBackoff: d.cfg.Webhooks.BaseBackoff.D(),
		Shared: d.db.Backend() == store.BackendPostgres, Node: d.node}))
	d.hooks = svc
	return nil
}
