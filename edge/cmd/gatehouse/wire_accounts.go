package main

import (
	"context"
	"net/url"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/gatehouse-dev/gatehouse/edge/accounts"
	"github.com/gatehouse-dev/gatehouse/edge/admin"
	"github.com/gatehouse-dev/gatehouse/edge/config"
	"github.com/gatehouse-dev/gatehouse/edge/ratelimit/redisrate"
	"github.com/gatehouse-dev/gatehouse/edge/store"
	"github.com/gatehouse-dev/gatehouse/edge/tenancy"
)

var _ accounts.Throttle = (*redisrate.Throttle)(nil)

// adminAccess is what the admin API needs beyond its routes: dashboard accounts and sessions,
// and each project's org for the org scoping (decisions.md 8.2).
type adminAccess struct {
	users    *accounts.Service
	accounts *admin.Accounts
}

// newAdminAccess builds the dashboard accounts over the store; with Redis (rdb not nil) the
// failed sign-ins are counted for all nodes together.
func newAdminAccess(cfg config.Config, db *store.DB, ten *tenancy.Service, rdb *redis.Client) adminAccess {
	path := "/"
	if u, err := url.Parse(cfg.PublicURL); err == nil {
		path = strings.TrimRight(u.Path, "/") + "/"
	}
	opts := accounts.Options{DB: db}
	if rdb != nil {
		opts.SharedThrottle = redisrate.NewThrottle(rdb, redisrate.ThrottleOptions{Name: "login",
			Max: accounts.DefaultFailures, Per: time.Minute})
	}
	users := accounts.NewService(opts)
	return adminAccess{users: users, accounts: admin.NewAccounts(users, ten, admin.SecureCookie(cfg.PublicURL), path)}
}

// projectOrg names a project's org (the admin guard's question).
func projectOrgOf(ten *tenancy.Service) func(ctx context.Context, project string) (string, error) {
	return func(ctx context.Context, project string) (string, error) {
		p, err := ten.Project(ctx, project)
		return p.Org, err
	}
}
