package main

import (
	"context"
	"net/url"
	"strings"
	"time"

	"github.com/gatehouse-dev/gatehouse/edge/accounts"
	"github.com/gatehouse-dev/gatehouse/edge/admin"
	"github.com/gatehouse-dev/gatehouse/edge/tenancy"
)

// adminAccess is what the admin API needs beyond its routes: dashboard accounts and sessions,
// and each project's org for the org scoping (decisions.md 8.2).
type adminAccess struct {
	users    *accounts.Service
	accounts *admin.Accounts
}

// newAdminAccess builds the dashboard accounts over the store. With redis.url the sign-in
// throttle's buckets are shared by every node (d.redis); without it each node counts alone.
func newAdminAccess(d deps) adminAccess {
	path := "/"
	if u, err := url.Parse(d.cfg.PublicURL); err == nil {
		path = strings.TrimRight(u.Path, "/") + "/"
	}
	users := accounts.New(d.db, accounts.Options{
		Shared: sharedLimiter(d, "signin", accounts.DefaultFailures, time.Minute)})
	return adminAccess{users: users, accounts: admin.NewAccounts(users, d.tenancy, admin.SecureCookie(d.cfg.PublicURL), path)}
}

// projectOrg names a project's org (the admin guard's question).
func projectOrgOf(ten *tenancy.Service) func(ctx context.Context, project string) (string, error) {
	return func(ctx context.Context, project string) (string, error) {
		p, err := ten.Project(ctx, project)
		return p.Org, err
	}
}
