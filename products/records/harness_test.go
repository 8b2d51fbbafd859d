package records_test

import (
	"context"
	"testing"

	"github.com/gatehouse-dev/gatehouse/edge"
	"github.com/gatehouse-dev/gatehouse/edge/config"
	"github.com/gatehouse-dev/gatehouse/edge/cursor"
	"github.com/gatehouse-dev/gatehouse/edge/edgetest"
	"github.com/gatehouse-dev/gatehouse/edge/store"
	"github.com/gatehouse-dev/gatehouse/edge/tenancy"
	"github.com/gatehouse-dev/gatehouse/index/title"
	"github.com/gatehouse-dev/gatehouse/products/records"
)

const tenants = `
orgs:
  - slug: acme
    projects:
      - id: demo
        keys:
          - {name: web, value: pk_live_demo_web, products: [forms, records]}
          - {name: server, value: sk_live_demo_server, products: [records]}
          - {name: forms-only, value: pk_live_demo_forms, products: [forms]}
        collections:
          - name: authors
            public: true
            fields:
              - {name: title, type: text}
              - {name: email, type: text, private: true}
            records:
              - {id: au-1, published: true, data: {title: Ada Lovelace, email: ada@acme.test}}
              - {id: au-2, published: true, data: {title: Grace Hopper, email: grace@acme.test}}
              - {id: au-3, published: false, data: {title: Draft Author, email: draft@acme.test}}
          - name: posts
            public: true
            fields:
              - {name: title, type: text}
              - {name: category, type: select, options: [news, guides, reviews]}
              - {name: tags, type: multiselect, options: [go, wasm, edge]}
              - {name: views, type: number}
              - {name: day, type: date}
              - {name: author, type: relation, collection: authors}
              - {name: related, type: relations, collection: posts}
              - {name: internalNote, type: text, private: true}
            records:
              - {id: post-1, published: true, data: {title: Hello world, category: news, tags: [go], views: 3, day: "2026-01-03", author: au-1, related: [post-2]}}
              - {id: post-2, published: true, data: {title: "Getting started, with: Gatehouse", category: guides, tags: [go, edge], views: 120, day: "2026-01-01", author: au-2, related: [post-1, post-3]}}
              - {id: post-3, published: true, data: {title: Wasm plugins at the edge, category: guides, tags: [wasm, edge], views: 75, author: au-1, internalNote: secret-3}}
              - {id: post-4, published: true, data: {title: Reviewing edge gateways, category: reviews, tags: [edge], views: 42, author: au-3}}
              - {id: post-5, published: true, data: {title: Hello again, category: news, tags: [], views: 9, internalNote: ship it}}
              - {id: post-6, published: false, data: {title: Hello draft, category: news, tags: [go], views: 1000, author: au-1}}
          - name: internal
            public: false
            fields:
              - {name: title, type: text}
            records:
              - {id: in-1, published: true, data: {title: Internal hello}}
      - id: other
        keys:
          - {name: web, value: pk_live_other_web, products: [records]}
  - slug: beta
    keys:
      - {name: org, value: pk_live_beta_org, products: [records]}
    projects:
      - id: beta1
`

const (
	pk      = "pk_live_demo_web"
	sk      = "sk_live_demo_server"
	base    = "/records/projects/demo/collections"
	posts   = base + "/posts"
	authors = base + "/authors"
)

// newHarness starts a gateway with the records product mounted and the tenants above applied.
func newHarness(t testing.TB, opts ...func(*records.Options)) (*edgetest.Harness, *records.Service) {
	return newHarnessConfig(t, nil, opts...)
}

// newHarnessConfig is newHarness with cfg editing the gateway's configuration first.
func newHarnessConfig(t testing.TB, cfg func(*config.Config), opts ...func(*records.Options)) (*edgetest.Harness, *records.Service) {
	var svc *records.Service
	h := edgetest.New(t, edgetest.Options{
		Config:  cfg,
		Tenants: tenants,
		Products: func(t testing.TB, d edgetest.Deps) []edge.Product {
			cur, err := cursor.NewCursors([]byte("0123456789abcdef0123456789abcdef"))
			if err != nil {
				t.Fatal(err)
			}
			titles, err := title.OpenMemory()
			if err != nil {
				t.Fatal(err)
			}
			o := records.Options{DB: d.DB, Tenancy: d.Tenancy, Titles: titles, Log: d.Log, Shared: d.DB.Backend() == store.BackendPostgres}
			for _, fn := range opts {
				fn(&o)
			}
			svc, err = records.NewService(o)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = svc.Close() })
			if err := d.Tenancy.Add(svc); err != nil {
				t.Fatal(err)
			}
			if err := svc.Start(context.Background()); err != nil {
				t.Fatal(err)
			}
			return []edge.Product{records.NewAPI(svc, d.Auth, cur)}
		},
	})
	// Registered after the harness's own cleanup, so it runs before the store closes.
	t.Cleanup(func() { _ = svc.Stop(context.Background()) })
	return h, svc
}

// startRecords starts a records service over o.DB, as one node of a gateway, without HTTP: it
// fills in o.Tenancy (a tenancy service of its own) and o.Titles (in memory) unless
// set, runs prepare (when not nil) on the new service, applies doc (when not empty) through
// its tenancy service, and starts it. The caller closes the service.
func startRecords(t testing.TB, o records.Options, doc string, prepare func(*records.Service)) (*records.Service, *tenancy.Service) {
	t.Helper()
	ten, err := tenancy.NewService(tenancy.Options{DB: o.DB})
	if err != nil {
		t.Fatal(err)
	}
	o.Tenancy = ten
	if o.Titles == nil {
		titles, err := title.OpenMemory()
		if err != nil {
			t.Fatal(err)
		}
		o.Titles = titles
	}
	svc, err := records.NewService(o)
	if err != nil {
		t.Fatal(err)
	}
	if prepare != nil {
		prepare(svc)
	}
	if err := ten.Add(svc); err != nil {
		t.Fatal(err)
	}
	if doc != "" {
		d, err := tenancy.Parse([]byte(doc))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ten.Apply(context.Background(), d); err != nil {
			t.Fatal(err)
		}
	}
	if err := svc.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	return svc, ten
}
