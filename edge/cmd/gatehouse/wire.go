package main

import (
	"context"
	"errors"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/gatehouse-dev/gatehouse/edge"
	"github.com/gatehouse-dev/gatehouse/edge/admin"
	"github.com/gatehouse-dev/gatehouse/edge/auth"
	"github.com/gatehouse-dev/gatehouse/edge/blob"
	"github.com/gatehouse-dev/gatehouse/edge/certs"
	"github.com/gatehouse-dev/gatehouse/edge/cmd/gatehouse/internal/pluginsync"
	"github.com/gatehouse-dev/gatehouse/edge/config"
	"github.com/gatehouse-dev/gatehouse/edge/cursor"
	"github.com/gatehouse-dev/gatehouse/edge/egress"
	"github.com/gatehouse-dev/gatehouse/edge/legacy"
	"github.com/gatehouse-dev/gatehouse/edge/membudget"
	"github.com/gatehouse-dev/gatehouse/edge/module"
	"github.com/gatehouse-dev/gatehouse/edge/store"
	"github.com/gatehouse-dev/gatehouse/edge/tenancy"
	"github.com/gatehouse-dev/gatehouse/edge/webhooks"
	"github.com/gatehouse-dev/gatehouse/plugins/host"
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
	// mem is each cache's share of the memory budget (memory.go).
	mem membudget.Shares
	// cores is the CPUs the process may use (GOMAXPROCS before serve raised it, procs.go);
	// 0 leaves the plugin host's default.
	cores int
}

// assembly is the wired gateway: its products, admin routes and background components.
type assembly struct {
	products   []edge.Product
	admin      []edge.AdminProduct
	components []module.Component
	// closers release what wire opened (the plugin host, the title index, services with a
	// Close), newest first, after the components stopped; each is added as soon as its
	// component is open, so a step that fails half-way leaves nothing open.
	closers []func() error
	// started is set once every component started: /readyz answers 503 before.
	started atomic.Bool
	// legacy are the modules' converters of tenancy's old layout (migrate_legacy.go).
	legacy []legacy.Converter
	// plugins keeps the plugin host's registrations in step with the tenants document.
	plugins *pluginsync.Syncer
	// provided are what the modules built so far provide to main's adapters (moduleDeps).
	provided module.Ports
	// sessions resolves the dashboard accounts' sessions for the admin guard.
	sessions *admin.Accounts
	// projectOrg names a project's org (the admin guard's question).
	projectOrg func(ctx context.Context, project string) (string, error)
	// overview are the products' shares of a project's overview (admin.Overview, mounted by
	// addDashboard once every product added its own).
	overview []admin.OverviewPart
	// domains are the tenants' own domains (wire_tls.go): host routing and on-demand TLS.
	domains *certs.Domains
}

// wire builds every part from deps. Nothing it builds runs yet (start does that); when a step
// fails, what the earlier steps opened is closed before wire returns.
//
// Every product is one module (edge/module, docs/architecture.md "The product module shape"):
// its package's Build(ctx, module.Deps) returns a module.Module, and addProducts
// (wire_products.go) loops over the list of builders: each module's sections join the tenants
// document (tenancy.Add), its API values are mounted, its components are started after the
// server listens (/readyz answers 503 until every component started, and while one that is
// module.Healthy reports a failure), its closers run newest first after they stopped. What
// main adds to a product are ports (internal/ports): the adapters of the webhook events, of
// the plugin host and of another product's service (forms' Mailer over
// email), found by the product with module.Port. Edge's TestProductsWiredAlike checks the shape.
func wire(ctx context.Context, d deps) (*assembly, error) {
	return build(ctx, d, steps()...)
}

// step is one part of the wiring (wire_<part>.go): it adds its products, admin routes,
// components and closers to the assembly, and what later steps use to d.
type step func(a *assembly, ctx context.Context, d *deps) error

// steps are wire's steps in order: the bus first (it starts first and stops last), the admin
// API's own routes before the products', the plugin host and the webhooks before the products
// that use them; then the data of an older release moves to its owners (migrate, before
// anything reads the sections) and the plugins are registered.
func steps() []step {
	return []step{(*assembly).addBus, (*assembly).addAdmin, (*assembly).addPlugins, (*assembly).addWebhooks,
		(*assembly).addProducts, (*assembly).migrate, (*assembly).syncPlugins, (*assembly).addDashboard, (*assembly).addDomains}
}

// build runs the steps over d; when one fails, it closes what the earlier ones opened and
// returns the error.
func build(ctx context.Context, d deps, steps ...step) (*assembly, error) {
	a := &assembly{projectOrg: projectOrgOf(d.tenancy)}
	if d.egress == nil {
		d.egress = newEgress(d.cfg)
	}
	for _, s := range steps {
		if err := s(a, ctx, &d); err != nil {
			if cerr := a.close(); cerr != nil {
				err = errors.Join(err, cerr)
			}
			return nil, err
		}
	}
	return a, nil
}

// server makes the edge server over the assembly: its products, the admin API's routes and
// the admin sessions; ready answers /readyz after the assembly's own check.
func (a *assembly) server(cfg config.Config, log *slog.Logger, reg *prometheus.Registry, ready func() error) (*edge.Server, error) {
	return edge.New(edge.Options{Config: cfg, Log: log, Registry: reg,
		Products: a.products, Admin: a.admin, Sessions: a.sessions, ProjectOrg: a.projectOrg, TenantHosts: a.tenantHosts(),
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
// component started (journals drained to the start point), and again while a component that
// is module.Healthy reports a failure (an email worker whose store refuses its claims, a title
// worker whose index refuses its writes); serve adds the storage's ping.
func (a *assembly) ready() error {
	if !a.started.Load() {
		return errStarting
	}
	for _, c := range a.components {
		if h, ok := c.(module.Healthy); ok {
			if err := h.Healthy(); err != nil {
				return err
			}
		}
	}
	return nil
}

// start starts the components in order; it stops at the first that fails (launch stops them).
func (a *assembly) start(ctx context.Context) error {
	for _, c := range a.components {
		if err := c.Start(ctx); err != nil {
			return err
		}
	}
	a.started.Store(true)
	return nil
}

// launch starts the components once the server listens. When one fails to start (and ctx is
// not done: a signal while starting shuts down as after any signal), it halts the server (no
// more connections, the requests under way answered), stops every component newest first (each
// Stop tolerates a component that did not start) and returns the start error; the caller then
// closes the assembly.
func (a *assembly) launch(ctx context.Context, halt func(context.Context) error, timeout time.Duration) error {
	err := a.start(ctx)
	if err == nil || ctx.Err() != nil {
		return nil
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), timeout)
	defer cancel()
	_ = halt(sctx)
	return errors.Join(err, a.stop(sctx))
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
	err := module.Close(a.closers)
	a.closers = nil
	return err
}
