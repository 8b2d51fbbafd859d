package main

import (
	"context"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"

	"github.com/gatehouse-dev/gatehouse/edge/admin"
	"github.com/gatehouse-dev/gatehouse/edge/store"
	"github.com/gatehouse-dev/gatehouse/products/email"
)

// addEmail wires the Email product: the service (its sends group-committed by the store), the
// public and admin routes, the delivery worker with the configured transport, and their
// shutdown.
func (a *assembly) addEmail(_ context.Context, d *deps) error {
	from := email.Address{Email: "noreply@localhost"}
	if u, err := url.Parse(d.cfg.PublicURL); err == nil && u.Hostname() != "" && strings.Contains(u.Hostname(), ".") {
		from.Email = "noreply@" + u.Hostname()
	}
	log := d.log.With("product", "email")
	// The project's email.send plugins see each rendered message before it is queued.
	svc, err := email.NewService(email.Options{DB: d.db, Tenancy: d.tenancy, Log: log, DefaultFrom: from,
		Registerer: d.reg, Events: emailEvents{hooks: d.hooks}, Plugins: emailPlugins{h: d.plugins}})
	if err != nil {
		return err
	}
	a.closers = append(a.closers, svc.Close)
	if err := d.tenancy.Add(svc); err != nil {
		return err
	}
	a.mail = svc
	var tr email.Transport
	switch d.cfg.Email.Transport {
	case "smtp":
		s := d.cfg.Email.SMTP
		tr, err = email.NewSMTP(email.SMTPOptions{Host: s.Host, Port: s.Port, Username: s.Username, Password: s.Password, TLS: s.TLS,
			Dial: d.egress.DialContext})
		if err != nil {
			return err
		}
	case "outbox", "":
		tr = &email.Outbox{Dir: filepath.Join(d.cfg.Data, "outbox")}
	default:
		return fmt.Errorf("email: unknown transport %q", d.cfg.Email.Transport)
	}
	// On a shared database other nodes deliver too: the worker then requeues only its own leases.
	w := svc.NewWorker(email.WorkerOptions{Transport: tr, Concurrency: d.cfg.Email.Concurrency, Log: log,
		Shared: d.db.Backend() == store.BackendPostgres, Node: d.node})
	a.products = append(a.products, email.NewAPI(svc, d.auth, d.cursors))
	a.components = append(a.components, w)
	a.overview = append(a.overview, admin.OverviewPart{Name: "email", Read: func(ctx context.Context, q admin.OverviewQuery) (any, error) {
		return svc.Overview(ctx, q.Project, q.Since)
	}})
	return nil
}
