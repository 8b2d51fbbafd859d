package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/gatehouse-dev/gatehouse/edge/admin"
	"github.com/gatehouse-dev/gatehouse/edge/apierr"
	"github.com/gatehouse-dev/gatehouse/edge/egress"
	"github.com/gatehouse-dev/gatehouse/edge/pluginreg"
	"github.com/gatehouse-dev/gatehouse/edge/tenancy"
	"github.com/gatehouse-dev/gatehouse/plugins/host"
	"github.com/gatehouse-dev/gatehouse/products/email"
	"github.com/gatehouse-dev/gatehouse/products/forms"
	"github.com/gatehouse-dev/gatehouse/products/records"
)

// addPlugins opens the Wasm host and keeps its registrations in step with the tenants
// document: every project's plugins are registered now, and a project is synced again after
// any change to its plugins or uploaded modules (a replaced module swaps atomically). The
// host is d.plugins for the later steps.
func (a *assembly) addPlugins(ctx context.Context, d *deps) error {
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
	ps := &pluginSync{h: h, r: reg, log: d.log, done: map[string]map[string]string{}}
	projects, err := d.tenancy.Projects(ctx)
	if err != nil {
		return err
	}
	for _, p := range projects {
		ps.sync(ctx, p.ID, false)
	}
	d.tenancy.OnChange(ps.changed)
	reg.CheckWith(ps)
	a.admin = append(a.admin, admin.NewPlugins(d.tenancy, pluginAdmin{h}))
	d.plugins = h
	return nil
}

var _ host.Egress = (*egress.Policy)(nil)

// pluginSync registers the tenants document's plugins with the host, and vets plugins for the
// registry before an apply or upload stores them.
type pluginSync struct {
	h    *host.Host
	r    *pluginreg.Registry
	log  *slog.Logger
	mu   sync.Mutex
	done map[string]map[string]string // project -> plugin name -> fingerprint of what is registered (or refused)
}

var _ pluginreg.Checker = (*pluginSync)(nil)

func (s *pluginSync) changed(ctx context.Context, changes []tenancy.Change) {
	projects := map[string]bool{}
	var uploads []tenancy.Change
	remote := false
	for _, c := range changes {
		switch c.Kind {
		case "plugin", "module", "project":
			projects[c.Project] = true
		}
		if c.Kind == "module" && c.Remote {
			uploads = append(uploads, c)
		}
		remote = remote || c.Remote
	}
	ctx = context.WithoutCancel(ctx)
	if !remote {
		for p := range projects {
			s.sync(ctx, p, false)
		}
		return
	}
	// Another node's change (edge/bus): compiling a module takes a while (a few hundred ms for
	// the interpreter the host starts it on), and the bus hands every node's changes over in
	// order, so a key revocation must not wait behind it. Each sync reads the store under s.mu,
	// so the last to run registers the latest state.
	go func() {
		for _, u := range uploads { // compile ahead: a plugin naming the upload then swaps at once
			if wasm, err := s.r.Module(ctx, u.Project, u.Name); err == nil {
				_ = s.h.Precompile(ctx, u.Project, wasm) // the uploading node checked it
			}
		}
		for p := range projects {
			s.sync(ctx, p, true)
		}
	}()
}

// errNotUploaded is the reason of a plugin whose module names an upload that is not there.
var errNotUploaded = errors.New("module has not been uploaded")

// sync registers what project's plugins say and unregisters what they no longer name. A
// plugin whose module is missing or refused stays in the host as refused: its hooks fail
// (closed or open, as its onError says) and the admin API shows why. After another node's
// change (remote), a module new to this node runs on the interpreter until its machine code is
// compiled (host.Precompile): the node that made the change checked it.
func (s *pluginSync) sync(ctx context.Context, project string, remote bool) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	s.mu.Lock()
	defer s.mu.Unlock()
	plugins, err := s.r.Plugins(ctx, project)
	if err != nil {
		s.log.Error("plugins: reading registrations", "project", project, "err", err)
		return
	}
	prev := s.done[project]
	next := map[string]string{}
	for _, p := range plugins {
		module, merr := s.module(ctx, project, p.Module)
		reg := registration(project, p, module)
		fp := fingerprint(reg)
		if prev[p.Name] == fp || prev[p.Name] == "refused:"+fp {
			next[p.Name] = prev[p.Name]
			continue
		}
		err := merr
		if err == nil {
			if remote {
				_ = s.h.Precompile(ctx, project, module) // a module it refuses, Register refuses too
			}
			err = s.h.Register(ctx, reg)
		}
		if err != nil {
			s.log.Error("plugins: registration refused", "project", project, "plugin", p.Name, "module", p.Module, "err", err)
			if rerr := s.h.Refuse(ctx, reg, err); rerr != nil {
				s.log.Error("plugins: recording a refusal", "project", project, "plugin", p.Name, "err", rerr)
			}
			next[p.Name] = "refused:" + fp
			continue
		}
		s.log.Info("plugins: registered", "project", project, "plugin", p.Name, "hooks", p.Hooks)
		next[p.Name] = fp
	}
	for name := range prev {
		if _, ok := next[name]; !ok {
			s.h.Unregister(project, name)
		}
	}
	s.done[project] = next
}

// CheckPlugin implements pluginreg.Checker: nil when the host would run p. A module
// naming an upload that is not there yet is accepted (the plugin shows as refused until it
// is uploaded); a module path that cannot be read is refused.
func (s *pluginSync) CheckPlugin(ctx context.Context, project string, p pluginreg.Plugin) error {
	module, err := s.module(ctx, project, p.Module)
	if errors.Is(err, errNotUploaded) {
		return nil
	}
	if err != nil {
		return err
	}
	reg := registration(project, p, module)
	s.mu.Lock()
	same := s.done[project][p.Name] == fingerprint(reg)
	s.mu.Unlock()
	if same {
		return nil // registered as it is
	}
	return s.h.Check(ctx, reg)
}

// CheckModule implements pluginreg.Checker for an upload: every plugin of the project that
// names the module must accept the new bytes; with none, the module is checked on its own.
func (s *pluginSync) CheckModule(ctx context.Context, project, name string, module []byte) error {
	plugins, err := s.r.Plugins(ctx, project)
	if err != nil {
		return err
	}
	checked := false
	for _, p := range plugins {
		if p.Module != name || pluginreg.IsModulePath(p.Module) {
			continue
		}
		checked = true
		if err := s.h.Check(ctx, registration(project, p, module)); err != nil {
			return fmt.Errorf("as plugin %s: %w", p.Name, err)
		}
	}
	if checked {
		return nil
	}
	return s.h.CheckModule(ctx, project, module)
}

func registration(project string, p pluginreg.Plugin, module []byte) host.Registration {
	return host.Registration{Project: project, Name: p.Name, Module: module, Hooks: p.Hooks, OnError: p.OnError,
		AllowHosts: p.AllowHosts, Limits: host.Limits{MemoryMB: p.Limits.MemoryMB, TimeoutMs: p.Limits.TimeoutMs}, Config: p.Config}
}

// module reads a plugin's module: a .wasm file path, or the name of an uploaded module
// (errNotUploaded when there is none).
func (s *pluginSync) module(ctx context.Context, project, module string) ([]byte, error) {
	if pluginreg.IsModulePath(module) {
		return os.ReadFile(module)
	}
	b, err := s.r.Module(ctx, project, module)
	if errors.Is(err, pluginreg.ErrNotFound) {
		return nil, fmt.Errorf("%q: %w", module, errNotUploaded)
	}
	return b, err
}

// pluginAdmin adapts the host to the admin API's plugin routes.
type pluginAdmin struct{ h *host.Host }

var _ admin.PluginHost = pluginAdmin{}

// PluginStatus lists a project's plugins as the admin API shows them.
func (p pluginAdmin) PluginStatus(project string) []admin.PluginStatus {
	out := []admin.PluginStatus{}
	for _, st := range p.h.Status(project) {
		a := admin.PluginStatus{Name: st.Name, Hooks: st.Hooks, Status: st.Status, LastError: st.LastError,
			Calls: st.Calls, Errors: st.Errors}
		if st.LastErrorAt != nil {
			a.LastErrorAt = st.LastErrorAt.UTC().Format(tenancy.TimeFormat)
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
		out[i] = admin.PluginLogLine{Time: l.Time.UTC().Format(tenancy.TimeFormat), Text: l.Text}
	}
	return out, true
}

func fingerprint(r host.Registration) string {
	h := sha256.New()
	h.Write(r.Module)
	r.Module = nil
	meta, _ := json.Marshal(r)
	h.Write(meta)
	return hex.EncodeToString(h.Sum(nil))
}

// pluginError is the API error of a fail-closed plugin that gave no verdict: the product's
// busy error when the host was over budget, its failed error otherwise.
func pluginError(err, failed, busy error) error {
	if errors.Is(err, host.ErrBusy) {
		return fmt.Errorf("%w: %v", busy, err)
	}
	return fmt.Errorf("%w: %v", failed, err)
}

// formsPlugins gives the forms product its forms.submit filter and plugin captcha verifiers.
type formsPlugins struct{ h *host.Host }

var (
	_ forms.Plugins  = formsPlugins{}
	_ forms.Verifier = pluginVerifier{}
	_ email.SendHook = emailPlugins{}
)

// FilterSubmission runs the project's forms.submit plugins.
func (f formsPlugins) FilterSubmission(ctx context.Context, in forms.FilterInput) (map[string]any, error) {
	v, err := f.h.FormsSubmit(ctx, in.Project, in.Form, in.Data)
	if err != nil {
		return nil, pluginError(err, forms.ErrPluginFailed, forms.ErrPluginBusy)
	}
	switch v.Action {
	case host.Reject:
		return nil, apierr.PluginRejected(v.Code, v.Message, v.Plugin)
	case host.Rewrite:
		return v.Data, nil
	}
	return in.Data, nil
}

// CaptchaVerifier returns the verifier of a plugin registered for captcha.verify.
func (f formsPlugins) CaptchaVerifier(_ context.Context, project, plugin string) (forms.Verifier, error) {
	for _, name := range f.h.Plugins(project) {
		if name == plugin {
			return pluginVerifier{h: f.h, plugin: plugin}, nil
		}
	}
	return nil, fmt.Errorf("plugin %q is not registered for project %q", plugin, project)
}

type pluginVerifier struct {
	h      *host.Host
	plugin string
}

// Verify asks the plugin; a failed call (fail-closed) is no verdict.
func (p pluginVerifier) Verify(ctx context.Context, ch forms.Challenge) (forms.Verdict, error) {
	ok, err := p.h.CaptchaVerify(ctx, ch.Project, p.plugin, ch.Token, ch.RemoteIP)
	if err != nil {
		return forms.Verdict{}, err
	}
	return forms.Verdict{Success: ok}, nil
}

// recordsPlugins runs the records.read plugins over a page of records; a fail-closed plugin
// that gives no verdict answers 503 PLUGIN_FAILED (or PLUGIN_BUSY), as for the other hooks.
type recordsPlugins struct{ h *host.Host }

var _ records.ReadFilter = recordsPlugins{}

// RecordsRead runs the project's records.read plugins.
func (r recordsPlugins) RecordsRead(ctx context.Context, project, collection string, page []json.RawMessage) ([]json.RawMessage, error) {
	out, err := r.h.RecordsRead(ctx, project, collection, page)
	if err != nil {
		return nil, pluginError(err, records.ErrPluginFailed, records.ErrPluginBusy)
	}
	return out, nil
}

// emailPlugins runs the email.send plugins on a message before it is queued.
type emailPlugins struct{ h *host.Host }

// FilterSend lets plugins refuse a send or rewrite its tags and template variables (the email
// service renders the template again with rewritten variables).
func (e emailPlugins) FilterSend(ctx context.Context, project string, d *email.Draft) error {
	m := d.Message
	in := host.EmailInput{To: host.Address{Email: m.To.Email, Name: m.To.Name}, From: &host.Address{Email: m.From.Email, Name: m.From.Name},
		TemplateID: m.TemplateID, Subject: m.Subject, BodyHTML: m.HTML, BodyText: m.Text, Tags: m.Tags, Metadata: m.Metadata}
	if m.ReplyTo != nil {
		in.ReplyTo = &host.Address{Email: m.ReplyTo.Email, Name: m.ReplyTo.Name}
	}
	if d.Variables != nil {
		in.Variables = make(map[string]any, len(d.Variables))
		for k, v := range d.Variables {
			in.Variables[k] = v
		}
	}
	v, err := e.h.EmailSend(ctx, project, in)
	if err != nil {
		return pluginError(err, email.ErrPluginFailed, email.ErrPluginBusy)
	}
	switch v.Action {
	case host.Reject:
		return apierr.PluginRejected(v.Code, v.Message, v.Plugin)
	case host.Rewrite:
		m.Tags = v.Tags
		if d.Variables != nil && v.Variables != nil {
			vars, bad, err := email.ParseVars(v.Variables)
			if err != nil {
				return fmt.Errorf("%w: %s: variable %q: %v", email.ErrPluginFailed, v.Plugin, bad, err)
			}
			d.Variables = vars
		}
	}
	return nil
}
