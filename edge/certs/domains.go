package certs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/gatehouse-dev/gatehouse/edge/config"
	"github.com/gatehouse-dev/gatehouse/edge/journal"
	"github.com/gatehouse-dev/gatehouse/edge/store"
	"github.com/gatehouse-dev/gatehouse/edge/tenancy"
	"github.com/gatehouse-dev/gatehouse/edge/tenantcache"
)

// What a tenant domain serves (decisions.md 9.4).
const (
	ServesAssets = "assets"
	ServesEmbed  = "embed"
	ServesAPI    = "api"
)

// Domain is one entry of a project's `domains:` in the tenants document.
type Domain struct {
	Host   string `json:"host"`
	Serves string `json:"serves"`
}

// storedDomain is a domain as stored under its host: the project it belongs to.
type storedDomain struct {
	Project string `json:"project"`
	Serves  string `json:"serves"`
}

// domainKey: tls/domain/<host> -> storedDomain. A host is in one project only.
func domainKey(host string) []byte { return store.Key("tls", "domain", host) }

var domainRoot = store.Prefix("tls", "domain")

// kindDomain is the Change kind of a tenant domain (its Name is the host).
const kindDomain = "domain"

// Domains owns the project section "domains" and answers which project a host belongs to,
// from a cache that the section's changes (on any node) invalidate.
type Domains struct {
	db    *store.DB
	cache *tenantcache.Cache[storedDomain]
}

var (
	_ tenancy.Owner   = (*Domains)(nil)
	_ tenancy.Section = domainSection{}
	_ HostLookup      = (*Domains)(nil)
)

// NewDomains returns the tenant domains kept in db.
func NewDomains(db *store.DB) *Domains {
	return &Domains{db: db, cache: tenantcache.New[storedDomain](10000)}
}

// Sections implements tenancy.Owner: a project's domains.
func (d *Domains) Sections() []tenancy.Section { return []tenancy.Section{domainSection{}} }

// Changed implements tenancy.Owner: a change of any domain (or a project's removal) forgets
// every cached answer, the "not listed" ones included.
func (d *Domains) Changed(_ context.Context, changes []journal.Change) {
	for _, ch := range changes {
		if ch.Kind == kindDomain || ch.Kind == "project" {
			d.cache.Purge()
			return
		}
	}
}

// TenantHost returns the project and what it serves of the tenant domain host (lower-case,
// without port); ok is false for a host no project lists.
func (d *Domains) TenantHost(ctx context.Context, host string) (project, serves string, ok bool, err error) {
	sd, err := d.cache.Get(ctx, "", host, func(ctx context.Context) (storedDomain, error) {
		var sd storedDomain
		err := d.db.View(ctx, func(tx *store.Txn) error {
			raw, err := tx.Get(domainKey(host))
			if errors.Is(err, store.ErrNotFound) {
				return nil
			}
			if err != nil {
				return err
			}
			return json.Unmarshal(raw, &sd)
		})
		return sd, err
	})
	if err != nil || sd.Project == "" {
		return "", "", false, err
	}
	return sd.Project, sd.Serves, true, nil
}

// Listed implements HostLookup: whether a project lists host.
func (d *Domains) Listed(ctx context.Context, host string) (bool, error) {
	if !config.IsHostname(host) {
		return false, nil
	}
	_, _, ok, err := d.TenantHost(ctx, host)
	return ok, err
}

// Hosts implements HostLookup: every tenant domain the documents list, read from the store.
func (d *Domains) Hosts(ctx context.Context) ([]string, error) {
	var out []string
	err := d.db.View(ctx, func(tx *store.Txn) error {
		out = out[:0]
		return tx.Iterate(store.IterOptions{Prefix: domainRoot, KeysOnly: true}, func(k, _ []byte) (bool, error) {
			out = append(out, strings.TrimPrefix(string(k), string(domainRoot)))
			return true, nil
		})
	})
	return out, err
}

// domainSection is the domains key of a project.
type domainSection struct{}

func (domainSection) Name() string         { return "domains" }
func (domainSection) Level() tenancy.Level { return tenancy.ProjectLevel }

// Check refuses a host that is not a lower-case DNS name, a serves other than assets, embed or
// api, and a host listed twice in the project. A host listed by two projects is refused when
// the document is applied (the store knows every project's hosts).
func (domainSection) Check(c *tenancy.Check, raw json.RawMessage) {
	var ds []Domain
	if !c.Decode(raw, &ds) {
		return
	}
	seen := map[string]string{}
	for i, d := range ds {
		p := fmt.Sprintf("[%d]", i)
		if !config.IsHostname(d.Host) {
			c.Add(p+".host", "must be a lower-case DNS name such as img.customer.com (no scheme, port or path)")
		} else {
			c.Unique(seen, d.Host, p+".host", "host")
		}
		switch d.Serves {
		case ServesAssets, ServesEmbed, ServesAPI:
		default:
			c.Add(p+".serves", "must be assets, embed or api")
		}
	}
}

// Apply stores each domain under its host, refusing a host another project holds.
func (domainSection) Apply(w *tenancy.Writer, raw json.RawMessage) error {
	var ds []Domain
	if err := tenancy.Decode(raw, &ds); err != nil {
		return err
	}
	for i, d := range ds {
		k := domainKey(d.Host)
		prev, err := w.Txn.Get(k)
		switch {
		case errors.Is(err, store.ErrNotFound):
		case err != nil:
			return err
		default:
			var sd storedDomain
			if err := json.Unmarshal(prev, &sd); err != nil {
				return err
			}
			if sd.Project != w.Project {
				return &tenancy.InvalidError{Problems: []tenancy.Problem{{
					Path:    fmt.Sprintf("project %s: domains[%d].host", w.Project, i),
					Message: fmt.Sprintf("%q already belongs to project %s (a host serves one project: remove it there first)", d.Host, sd.Project),
				}}}
			}
		}
		if err := w.Put(k, kindDomain, d.Host, storedDomain{Project: w.Project, Serves: d.Serves}); err != nil {
			return err
		}
	}
	return nil
}

// Prune deletes the domains the document does not list (with prune: true).
func (domainSection) Prune(w *tenancy.Writer) error {
	return w.Untouched(domainRoot, func(k, v []byte) error {
		var sd storedDomain
		if err := json.Unmarshal(v, &sd); err != nil {
			return err
		}
		return w.In("", sd.Project).Delete(k, kindDomain, strings.TrimPrefix(string(k), string(domainRoot)))
	})
}
