// Package module is the shape every product has toward the composition root: Deps are what a
// product is built from, Module is what it gives back (its routes, its section of the tenants
// document, its background components and what it must close), and Builder is the one
// constructor each products/* package exports as Build. The composition root
// (edge/cmd/gatehouse) loops over a list of builders; a new product is one package and one
// line in that list (docs/architecture.md, "The product module shape").
package module

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/gatehouse-dev/gatehouse/edge"
	"github.com/gatehouse-dev/gatehouse/edge/auth"
	"github.com/gatehouse-dev/gatehouse/edge/blob"
	"github.com/gatehouse-dev/gatehouse/edge/config"
	"github.com/gatehouse-dev/gatehouse/edge/cursor"
	"github.com/gatehouse-dev/gatehouse/edge/egress"
	"github.com/gatehouse-dev/gatehouse/edge/legacy"
	"github.com/gatehouse-dev/gatehouse/edge/membudget"
	"github.com/gatehouse-dev/gatehouse/edge/ratelimit"
	"github.com/gatehouse-dev/gatehouse/edge/store"
	"github.com/gatehouse-dev/gatehouse/edge/tenancy"
)

// Builder is the constructor every product exports as Build: it builds the product from d and
// starts nothing (the composition root starts Module.Components after the server listens).
// When it fails, it has closed what it opened.
type Builder func(ctx context.Context, d Deps) (Module, error)

// Deps are what every product is built from: the shared parts, the node's flags and the ports
// the composition root adapts for it.
type Deps struct {
	// Config is the gateway's configuration; a product reads its own section (email.*,
	// forms.*, files.*) and the public URLs.
	Config config.Config
	// DB is the store (badger, or PostgreSQL shared by many nodes).
	DB *store.DB
	// Log is the gateway's logger; Build tags it product=<name>.
	Log *slog.Logger
	// Registerer takes the product's metrics (/metrics).
	Registerer prometheus.Registerer
	// Tenancy answers orgs, projects and keys, and takes the product's section.
	Tenancy *tenancy.Service
	// Auth checks the API keys on the product's routes.
	Auth *auth.Authenticator
	// Cursors signs the pagination cursors of the product's handlers.
	Cursors *cursor.Cursors
	// Blobs stores uploaded bytes (assets, form attachments).
	Blobs blob.Store
	// Egress is the outbound-connection policy (SMTP, captcha providers).
	Egress *egress.Policy
	// Now is the clock (nil: the product's default, time.Now).
	Now func() time.Time
	// Memory is each cache's share of the memory budget.
	Memory membudget.Shares
	// Node is this node's id among the nodes sharing the database ("" for a random one).
	Node string
	// Shared says other nodes use the same database (the postgres backend): workers then
	// requeue only their own leases and caches are checked against the store.
	Shared bool
	// Limiter returns rate-limit buckets every node shares (name keeps them apart), or nil
	// without Redis: the product then keeps its buckets in this node's memory. Nil: none.
	Limiter func(name string, rate int, per time.Duration) ratelimit.Allower
	// Ports are the adapters the composition root gives the products (webhook events, plugin
	// hooks, another product's service behind the port a product declares); each product
	// takes those whose interface it declares, with Port.
	Ports Ports
}

// Module is a built product, as the composition root assembles it.
type Module struct {
	// Name is the product's name: its path segment and its part of the overview.
	Name string
	// API are the product's HTTP types (edge.Product): its public routes, and its admin
	// routes under /admin/v1 where the type is also an edge.AdminProduct.
	API []edge.Product
	// Owner is the product's sections of the tenants document and the hook that drops its
	// caches after each committed change (tenancy.Add); nil for none.
	Owner tenancy.Owner
	// Components are the product's background parts, started in order after the server
	// listens and stopped newest first before storage closes. One that implements Healthy
	// takes part in /readyz.
	Components []Component
	// Closers release what Build opened, run newest first after the components stopped.
	Closers []func() error
	// Overview is the product's part of a project's overview (nil for none): its figures for
	// the project of org, since the RFC 3339 time since ("" for the product's default window).
	Overview func(ctx context.Context, org, project, since string) (any, error)
	// Legacy converts the product's data of tenancy's old layout (legacy.Migrate; nil for
	// none); the composition root runs every product's before anything reads the sections.
	Legacy []legacy.Converter
	// Provides are what the product offers the composition root's adapters of other
	// products' ports (email: its service, which forms' Mailer is adapted over).
	Provides []any
}

// Component is a background part: Start after the server listens, Stop (within ctx) on
// shutdown. A component that did not start tolerates Stop.
type Component interface {
	Start(ctx context.Context) error
	Stop(ctx context.Context) error
}

// Healthy is a component that can tell it stopped doing its work after it started (a store
// that refuses its reads, an index that refuses its writes): /readyz answers 503 while
// Healthy returns an error, and ready again once it returns nil.
type Healthy interface {
	Healthy() error
}

// Ports are adapters given to the products, each found by the interface it implements.
type Ports []any

// Port returns the first port implementing T (a port interface the product declares), or T's
// zero value (a nil interface: the product runs without it) when none does.
func Port[T any](ps Ports) T {
	for _, p := range ps {
		if v, ok := p.(T); ok {
			return v
		}
	}
	var zero T
	return zero
}

// Close runs closers newest first and joins their errors (Build uses it when a later step
// fails, the composition root after the components stopped).
func Close(closers []func() error) error {
	var errs []error
	for i := len(closers) - 1; i >= 0; i-- {
		errs = append(errs, closers[i]())
	}
	return errors.Join(errs...)
}
