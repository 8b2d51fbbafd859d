package email

import (
	"context"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"

	"github.com/gatehouse-dev/gatehouse/edge"
	"github.com/gatehouse-dev/gatehouse/edge/module"
)

// Build builds the Email product (module.Builder): the service (its sends group-committed by
// the store) with the email.send plugins (a SendHook port) and the status events (an Events
// port), its public and admin routes, and the delivery worker over the configured transport
// (email.transport: smtp, or outbox files in {data}/outbox). It provides its *Service, which
// the composition root adapts to other products' mail ports (forms' Mailer).
func Build(_ context.Context, d module.Deps) (module.Module, error) {
	from := Address{Email: "noreply@localhost"}
	if u, err := url.Parse(d.Config.PublicURL); err == nil && u.Hostname() != "" && strings.Contains(u.Hostname(), ".") {
		from.Email = "noreply@" + u.Hostname()
	}
	log := d.Log.With("product", "email")
	tr, err := transport(d)
	if err != nil {
		return module.Module{}, err
	}
	svc, err := NewService(Options{DB: d.DB, Tenancy: d.Tenancy, Log: log, DefaultFrom: from, Now: d.Now,
		Registerer: d.Registerer, Events: module.Port[Events](d.Ports), Plugins: module.Port[SendHook](d.Ports)})
	if err != nil {
		return module.Module{}, err
	}
	// On a shared database other nodes deliver too: the worker then requeues only its own leases.
	w := svc.NewWorker(WorkerOptions{Transport: tr, Concurrency: d.Config.Email.Concurrency, Log: log,
		Shared: d.Shared, Node: d.Node})
	return module.Module{
		Name:       "email",
		API:        []edge.Product{NewAPI(svc, d.Auth, d.Cursors)},
		Owner:      svc,
		Components: []module.Component{w},
		Closers:    []func() error{svc.Close},
		Overview: func(ctx context.Context, _, project, since string) (any, error) {
			return svc.Overview(ctx, project, since)
		},
		Legacy:   LegacyConverters(),
		Provides: []any{svc},
	}, nil
}

// transport is the delivery transport email.transport names.
func transport(d module.Deps) (Transport, error) {
	switch d.Config.Email.Transport {
	case "smtp":
		s := d.Config.Email.SMTP
		return NewSMTP(SMTPOptions{Host: s.Host, Port: s.Port, Username: s.Username, Password: s.Password, TLS: s.TLS,
			Dial: d.Egress.DialContext})
	case "outbox", "":
		return &Outbox{Dir: filepath.Join(d.Config.Data, "outbox")}, nil
	}
	return nil, fmt.Errorf("email: unknown transport %q", d.Config.Email.Transport)
}
