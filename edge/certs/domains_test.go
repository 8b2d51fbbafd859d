package certs

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/edge/edgetest/storetest"
	"github.com/gatehouse-dev/gatehouse/edge/store"
	"github.com/gatehouse-dev/gatehouse/edge/tenancy"
)

func domainService(t *testing.T) (*tenancy.Service, *Domains) {
	t.Helper()
	db := storetest.OpenBackend(t, store.BackendBadger)
	ten, err := tenancy.NewService(tenancy.Options{DB: db})
	if err != nil {
		t.Fatal(err)
	}
	d := NewDomains(db)
	if err := ten.Add(d); err != nil {
		t.Fatal(err)
	}
	return ten, d
}

func apply(t *testing.T, ten *tenancy.Service, doc string) error {
	t.Helper()
	parsed, err := ten.Parse([]byte(doc))
	if err != nil {
		return err
	}
	_, err = ten.Apply(context.Background(), parsed)
	return err
}

// TestDomainsSection: the section validates hosts and serves, keeps a host in one project,
// answers lookups from its cache and forgets them on change, and prunes.
func TestDomainsSection(t *testing.T) {
	ten, d := domainService(t)
	ctx := context.Background()
	for _, tc := range []struct{ name, domains, want string }{
		{"bad host", `[{host: "Img.Customer.test", serves: assets}]`, "domains[0].host"},
		{"host with port", `[{host: "img.customer.test:443", serves: assets}]`, "domains[0].host"},
		{"bad serves", `[{host: img.customer.test, serves: admin}]`, "domains[0].serves"},
		{"repeated", `[{host: a.customer.test, serves: api}, {host: a.customer.test, serves: embed}]`, "repeats"},
		{"unknown key", `[{host: a.customer.test, serves: api, tls: true}]`, "tls"},
	} {
		err := apply(t, ten, "orgs:\n  - slug: acme\n    projects:\n      - id: shop\n        domains: "+tc.domains+"\n")
		var inv *tenancy.InvalidError
		if !errors.As(err, &inv) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: apply = %v, want a validation problem with %q", tc.name, err, tc.want)
		}
	}
	doc := `orgs:
  - slug: acme
    projects:
      - id: shop
        domains: [{host: img.customer.test, serves: assets}, {host: api.customer.test, serves: api}]
      - id: blog
`
	if err := apply(t, ten, doc); err != nil {
		t.Fatal(err)
	}
	if p, s, ok, err := d.TenantHost(ctx, "img.customer.test"); !ok || p != "shop" || s != "assets" || err != nil {
		t.Errorf("TenantHost(img) = %q %q %v %v", p, s, ok, err)
	}
	if ok, _ := d.Listed(ctx, "evil.test"); ok {
		t.Error("an unlisted host is listed")
	}
	if hosts, err := d.Hosts(ctx); err != nil || !slices.Equal(hosts, []string{"api.customer.test", "img.customer.test"}) {
		t.Errorf("Hosts = %v %v", hosts, err)
	}
	// A second project may not take a host the first holds, in the same document or later.
	for _, other := range []string{
		doc + "        domains: [{host: img.customer.test, serves: embed}]\n",
		"orgs:\n  - slug: acme\n    projects:\n      - id: blog\n        domains: [{host: api.customer.test, serves: api}]\n",
	} {
		err := apply(t, ten, other)
		var inv *tenancy.InvalidError
		if !errors.As(err, &inv) || !strings.Contains(err.Error(), "already belongs to project shop") {
			t.Errorf("a host given to a second project: apply = %v", err)
		}
	}
	// A new host is seen at once (the negative answer cached before is dropped), a pruned one
	// is gone.
	if ok, _ := d.Listed(ctx, "forms.customer.test"); ok {
		t.Fatal("not listed yet")
	}
	if err := apply(t, ten, "prune: true\n"+strings.Replace(doc, "{host: api.customer.test, serves: api}", "{host: forms.customer.test, serves: embed}", 1)); err != nil {
		t.Fatal(err)
	}
	for host, want := range map[string]bool{"forms.customer.test": true, "api.customer.test": false, "img.customer.test": true} {
		if ok, err := d.Listed(ctx, host); ok != want || err != nil {
			t.Errorf("after the prune, Listed(%s) = %v %v, want %v", host, ok, err, want)
		}
	}
	if hosts, err := d.Hosts(ctx); err != nil || !slices.Equal(hosts, []string{"forms.customer.test", "img.customer.test"}) {
		t.Errorf("after the prune, Hosts = %v %v", hosts, err)
	}
}
