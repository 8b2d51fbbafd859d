package main

import (
	"context"
	"errors"
	"log/slog"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/gatehouse-dev/gatehouse/edge"
	"github.com/gatehouse-dev/gatehouse/edge/accounts"
	"github.com/gatehouse-dev/gatehouse/edge/admin"
	"github.com/gatehouse-dev/gatehouse/edge/auth"
	"github.com/gatehouse-dev/gatehouse/edge/blob"
	"github.com/gatehouse-dev/gatehouse/edge/config"
	"github.com/gatehouse-dev/gatehouse/edge/cursor"
	"github.com/gatehouse-dev/gatehouse/edge/egress"
	"github.com/gatehouse-dev/gatehouse/edge/store"
	"github.com/gatehouse-dev/gatehouse/edge/tenancy"
	"github.com/gatehouse-dev/gatehouse/edge/webhooks"
	"github.com/gatehouse-dev/gatehouse/plugins/host"
	"github.com/gatehouse-dev/gatehouse/products/email"
)

// deps are what every product is built from.
type deps struct {
	cfg     config.Config
	log     *slog.Logger
	db      *store.DB
	tenancy *tenancy.Service
	auth    *auth.Authenticator
	reg     prometheus.Registerer
	// cursors signs pagination cursors with a secret kept in the database.
	cursors *cursor.Cursors
	// blobs stores uploaded bytes (assets, form attachments).
	blobs blob.Store
	// plugins is the Wasm host running the tenants' plugins.
	plugins *host.Host
	// egress is the outbound-connection policy (SMTP, captcha providers, webhooks).
	egress *egress.Policy
	// hooks queues webhook events; products reach it through adapters (wire_webhooks.go).
	hooks *webhooks.Service
	// redis is the client of redis.url (nil without one): shared limits, the change feed.
	redis *redis.Client
	// node is this node's id among the nodes sharing the database (nodeID; "" for a random
	// one): the holder of its email and webhook leases.
	node string
}

// component is a product's background part: started after the server listens, stopped on shutdown.
type component interface {
	Start(ctx context.Context) error
	Stop(ctx context.Context) error
}

// assembly is the wired gateway: its products, admin routes and background components.
type assembly struct {
	products   []edge.Product
	admin      []edge.AdminProduct
	components []component
	readiness  []func() error
	// closers release what wire opened (the plugin host, the title index, services with a
	// Close), newest first, after the components stopped; each is added as soon as its
	// component is open, so a step that fails half-way leaves nothing open.
	closers []func() error
	// started is set once every component started: /readyz answers 503 before.
	started atomic.Bool
	// mail is the email product's service: form notifications are queued through it.
	mail *email.Service
	// users are the dashboard's accounts; sessions resolves their sessions for the admin guard.
	users    *accounts.Service
	sessions *admin.Accounts
	// projectOrg names a project's org (the admin guard's question).
	projectOrg func(ctx context.Context, project string) (string, error)
}

// wire builds every product from deps. This is the one place that knows all products. Nothing
// it builds runs yet (start does that); when a step fails, what the earlier steps opened is
// closed before wire returns.
//
// Every product is wired the same way (wire_<product>.go; edge's TestProductsWiredAlike checks
// the shape): NewService(Options) with the store in Options.DB and, where the product takes
// them, the logger in Log (tagged product=<name>), the clock in Now, metrics in Registerer, the
// plugin adapter the product declares in Plugins (wire_plugins.go; its plugin error codes live
// in the product's errors.go) and the events adapter in Events (wire_events.go); tenancy.Add
// joins its section of the tenants document; NewAPI(svc, auth, ...) makes its HTTP type API,
// an edge.Product; the service, or the worker it makes (svc.NewWorker, svc.NewSweeper), is a
// component started after the server listens (/readyz answers 503 until every component
// started); what holds resources is closed by a closer, newest first.
func wire(ctx context.Context, d deps) (_ *assembly, err error) {
	a := &assembly{}
	defer func() {
		if err != nil {
			_ = a.close()
		}
	}()
	if d.egress == nil {
		d.egress = newEgress(d.cfg)
	}
	if err := a.addBus(ctx, d); err != nil { // first: it starts first and stops last
		return nil, err
	}
	if err := a.addAdmin(d); err != nil { // the admin API's own routes, before the products'
		return nil, err
	}
	a.projectOrg = projectOrgOf(d.tenancy)
	if d.plugins, err = a.addPlugins(ctx, d); err != nil {
		return nil, err
	}
	if d.hooks, err = a.addWebhooks(ctx, d); err != nil {
		return nil, err
	}
	for _, add := range []func(context.Context, deps) error{a.addEmail, a.addFiles, a.addMembership, a.addForms, a.addRecords} {
		if err := add(ctx, d); err != nil {
			return nil, err
		}
	}
	if err := a.addDashboard(d); err != nil {
		return nil, err
	}
	return a, nil
}

// server makes the edge server over the assembly: its products, the admin API's routes and
// the admin sessions; ready answers /readyz after the assembly's own check.
func (a *assembly) server(cfg config.Config, log *slog.Logger, reg *prometheus.Registry, ready func() error) (*edge.Server, error) {
	return edge.New(edge.Options{Config: cfg, Log: log, Registry: reg,
		Products: a.products, Admin: a.admin, Sessions: a.sessions, ProjectOrg: a.projectOrg,
		Ready: func() error {
			if err := a.ready(); err != nil {
				return err
			}
			if ready != nil {
				return ready()
			}
			return nil
		}})
}

// newEgress builds the outbound-connection policy from the egress.* configuration.
func newEgress(cfg config.Config) *egress.Policy {
	return egress.New(egress.Options{
		AllowPrivateNetworks: cfg.Egress.AllowPrivateNetworks,
		Timeout:              cfg.Egress.Timeout.D(),
		MaxResponseBytes:     int64(cfg.Egress.MaxResponseKB) << 10,
	})
}

// errStarting answers /readyz while the components start (journals drain, workers start).
var errStarting = errors.New("starting")

// ready answers /readyz: 503 until storage is open, the indexes are loaded (wire) and every
// component started (journals drained to the start point), then each readiness check.
func (a *assembly) ready() error {
	if !a.started.Load() {
		return errStarting
	}
	for _, r := range a.readiness {
		if err := r(); err != nil {
			return err
		}
	}
	return nil
}

func (a *assembly) start(ctx context.Context) error {
	for _, c := range a.components {
		if err := c.Start(ctx); err != nil {
			return err
		}
	}
	a.started.Store(true)
	return nil
}

// stop stops components in reverse order (queues flush before storage closes).
func (a *assembly) stop(ctx context.Context) error {
	var errs []error
	for i := len(a.components) - 1; i >= 0; i-- {
		errs = append(errs, a.components[i].Stop(ctx))
	}
	return errors.Join(errs...)
}

// close releases what wire opened, newest first (components stopped before).
func (a *assembly) close() error {
	var errs []error
	for i := len(a.closers) - 1; i >= 0; i-- {
		errs = append(errs, a.closers[i]())
	}
	a.closers = nil
	return errors.Join(errs...)
}
