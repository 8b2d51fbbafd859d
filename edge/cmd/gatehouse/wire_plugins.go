package main

import (
	"context"
	"path/filepath"
	"time"

	"github.com/gatehouse-dev/gatehouse/edge/admin"
	"github.com/gatehouse-dev/gatehouse/edge/apitime"
	"github.com/gatehouse-dev/gatehouse/edge/cmd/gatehouse/internal/pluginsync"
	"github.com/gatehouse-dev/gatehouse/edge/egress"
	"github.com/gatehouse-dev/gatehouse/edge/pluginreg"
	"github.com/gatehouse-dev/gatehouse/plugins/host"
)

// addPlugins opens the Wasm host and keeps its registrations in step with the tenants
// document: a project is synced again after any change to its plugins or uploaded modules (a
// replaced module swaps atomically), and syncPlugins registers every project's plugins once
// the data of an older release moved. The host is d.plugins for the later steps.
func (a *assembly) addPlugins(_ context.Context, d *deps) error {
	opts := host.DefaultOptions()
	opts.CacheDir = d.cfg.Plugins.CacheDir
	if opts.CacheDir == "" {
		opts.CacheDir = filepath.Join(d.cfg.Data, "plugin-cache")
	}
	opts.Log = d.log.With("component", "plugins")
	// http_fetch connects under the one egress policy (decisions.md 8.3).
	opts.Egress = d.egress
	opts.Registerer = d.reg
	// One guest call per core, not per Go processor (serve may run more, procs.go).
	if d.cores > 0 {
		opts.Slots = d.cores
	}
	if d.cfg.Plugins.PoolSize > 0 {
		opts.PoolSize = d.cfg.Plugins.PoolSize
	}
	opts.MemoryBudgetMB = d.cfg.Plugins.MemoryBudgetMB
	opts.CPUBudget = time.Duration(d.cfg.Plugins.CPUBudgetMs) * time.Millisecond
	h, err := host.New(opts)
	if err != nil {
		return err
	}
	a.closers = append(a.closers, h.Close)
	reg := pluginreg.New(pluginreg.Options{DB: d.db, Tenancy: d.tenancy})
	if err := d.tenancy.Add(reg); err != nil {
		return err
	}
	a.admin = append(a.admin, reg)
	ps := pluginsync.New(h, reg, d.log)
	a.plugins = ps
	d.tenancy.OnChange(ps.Changed)
	reg.CheckWith(ps)
	a.admin = append(a.admin, admin.NewPlugins(d.tenancy, pluginAdmin{h}))
	a.overview = append(a.overview, admin.OverviewPart{Name: "plugins", Read: func(_ context.Context, q admin.OverviewQuery) (any, error) {
		return pluginOverview(h, q.Project), nil
	}})
	d.plugins = h
	usedGauge(d.reg, "gatehouse_memory_used_bytes", "plugins", func() float64 { return float64(h.MemoryUsed()) })
	return nil
}

// syncPlugins registers every project's plugins on the host (after migrate: the registry's
// sections of an older release have moved).
func (a *assembly) syncPlugins(ctx context.Context, d *deps) error {
	if a.plugins == nil {
		return nil
	}
	projects, err := d.tenancy.Projects(ctx)
	if err != nil {
		return err
	}
	ids := make([]string, len(projects))
	for i, p := range projects {
		ids[i] = p.ID
	}
	a.plugins.SyncAll(ctx, ids)
	return nil
}

var _ host.Egress = (*egress.Policy)(nil)

// pluginAdmin adapts the host to the admin API's plugin routes.
type pluginAdmin struct{ h *host.Host }

var _ admin.PluginHost = pluginAdmin{}

// PluginStatus lists a project's plugins as the admin API shows them.
func (p pluginAdmin) PluginStatus(project string) []admin.PluginStatus {
	out := []admin.PluginStatus{}
	for _, st := range p.h.Status(project) {
		a := admin.PluginStatus{Name: st.Name, Hooks: st.Hooks, Status: st.Status, Calls: st.Calls, Errors: st.Errors}
		if st.LastError != "" {
			a.LastError = &st.LastError
		}
		if st.LastErrorAt != nil {
			at := st.LastErrorAt.UTC().Format(apitime.Layout)
			a.LastErrorAt = &at
		}
		out = append(out, a)
	}
	return out
}

// PluginLogs returns the newest lines of a plugin's log.
func (p pluginAdmin) PluginLogs(project, name string, n int) ([]admin.PluginLogLine, bool) {
	lines, ok := p.h.LogLines(project, name, n)
	if !ok {
		return nil, false
	}
	out := make([]admin.PluginLogLine, len(lines))
	for i, l := range lines {
		out[i] = admin.PluginLogLine{Time: l.Time.UTC().Format(apitime.Layout), Text: l.Text}
	}
	return out, true
}

// pluginOverview is the plugins part of a project's overview: calls and failed calls (by kind)
// of its plugins since they were registered.
func pluginOverview(h *host.Host, project string) map[string]any {
	calls, errs := int64(0), int64(0)
	kinds := map[string]int64{}
	for _, st := range h.Status(project) {
		calls += st.Calls
		for k, n := range st.Errors {
			errs += n
			kinds[k] += n
		}
	}
	return map[string]any{"calls": calls, "errors": errs, "errorsByKind": kinds}
}
