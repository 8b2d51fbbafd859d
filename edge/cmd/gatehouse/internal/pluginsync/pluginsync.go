// Package pluginsync keeps the Wasm host's registrations in step with the tenants document
// and the uploaded modules: every project's plugins are registered at start, a project is
// synced again after any change to its plugins or modules (on this node, or on another one
// through the change bus), and plugins are vetted before an apply or an upload stores them.
// It is the one rule between the plugin registry (edge/pluginreg) and the host (plugins/host).
package pluginsync

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/gatehouse-dev/gatehouse/edge/journal"
	"github.com/gatehouse-dev/gatehouse/edge/pluginreg"
	"github.com/gatehouse-dev/gatehouse/plugins/host"
)

// Syncer registers the tenants document's plugins with the host, and vets plugins for the
// registry before an apply or upload stores them.
type Syncer struct {
	h    *host.Host
	r    *pluginreg.Registry
	log  *slog.Logger
	mu   sync.Mutex
	done map[string]map[string]string // project -> plugin name -> fingerprint of what is registered (or refused)
}

var _ pluginreg.Checker = (*Syncer)(nil)

// New makes a Syncer of the registry r's plugins onto the host h; it registers nothing until
// SyncAll or a change.
func New(h *host.Host, r *pluginreg.Registry, log *slog.Logger) *Syncer {
	return &Syncer{h: h, r: r, log: log, done: map[string]map[string]string{}}
}

// SyncAll registers every project's plugins (at start).
func (s *Syncer) SyncAll(ctx context.Context, projects []string) {
	for _, p := range projects {
		s.sync(ctx, p, false)
	}
}

// Changed is the tenancy change listener: it syncs the projects whose plugins, modules or
// settings changed (tenancy.Service.OnChange).
func (s *Syncer) Changed(ctx context.Context, changes []journal.Change) {
	projects := map[string]bool{}
	var uploads []journal.Change
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
func (s *Syncer) sync(ctx context.Context, project string, remote bool) {
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
func (s *Syncer) CheckPlugin(ctx context.Context, project string, p pluginreg.Plugin) error {
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
func (s *Syncer) CheckModule(ctx context.Context, project, name string, module []byte) error {
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
func (s *Syncer) module(ctx context.Context, project, module string) ([]byte, error) {
	if pluginreg.IsModulePath(module) {
		return os.ReadFile(module)
	}
	b, err := s.r.Module(ctx, project, module)
	if errors.Is(err, pluginreg.ErrNotFound) {
		return nil, fmt.Errorf("%q: %w", module, errNotUploaded)
	}
	return b, err
}

func fingerprint(r host.Registration) string {
	h := sha256.New()
	h.Write(r.Module)
	r.Module = nil
	meta, _ := json.Marshal(r)
	h.Write(meta)
	return hex.EncodeToString(h.Sum(nil))
}
