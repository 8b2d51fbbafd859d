package main

import (
	"context"
	"net/url"
	"strings"
	"time"

	"github.com/gatehouse-dev/gatehouse/edge/accounts"
	"github.com/gatehouse-dev/gatehouse/edge/admin"
	"github.com/gatehouse-dev/gatehouse/edge/auth"
	"github.com/gatehouse-dev/gatehouse/edge/backup"
	"github.com/gatehouse-dev/gatehouse/edge/ratelimit/redisrate"
	"github.com/gatehouse-dev/gatehouse/edge/tenancy"
)

var (
	_ accounts.Throttle = (*redisrate.Throttle)(nil)
	_ auth.Lookup       = (*tenancy.Service)(nil)
)

// addAdmin wires the admin API's own routes, ahead of the products' admin routes: orgs,
// projects and keys (admin.NewAPI), the dashboard accounts and sessions (with Redis the
// failed sign-ins are counted for all nodes together), and the backup download.
func (a *assembly) addAdmin(_ context.Context, d *deps) error {
	path := "/"
	if u, err := url.Parse(d.cfg.PublicURL); err == nil {
		path = strings.TrimRight(u.Path, "/") + "/"
	}
	opts := accounts.Options{DB: d.db}
	if d.redis != nil {
		opts.SharedThrottle = redisrate.NewThrottle(redisrate.ThrottleOptions{Redis: d.redis, Name: "login",
			Max: accounts.DefaultFailures, Per: time.Minute})
	}
	users, err := accounts.NewService(opts)
	if err != nil {
		return err
	}
	a.sessions = admin.NewAccounts(admin.AccountsOptions{Accounts: users, Tenancy: d.tenancy,
		Secure: admin.SecureCookie(d.cfg.PublicURL), Path: path})
	a.admin = append(a.admin, admin.NewAPI(d.tenancy), a.sessions,
		backup.NewAPI(backup.APIOptions{Source: backupSource(d.cfg, d.db, d.blobs), Log: d.log}))
	return nil
}

// projectOrgOf names a project's org (the admin guard's question).
func projectOrgOf(ten *tenancy.Service) func(ctx context.Context, project string) (string, error) {
	return func(ctx context.Context, project string) (string, error) {
		p, err := ten.Project(ctx, project)
		return p.Org, err
	}
}
