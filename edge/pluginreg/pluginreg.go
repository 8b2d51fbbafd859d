// Package pluginreg is the plugins section of the tenants document and the store of uploaded
// modules: which Wasm module a project runs at which hook points, with which limits. It
// validates and applies the section inside the apply's transaction, keeps modules uploaded
// through the admin API (POST /admin/v1/plugins), and answers the reads that edge/cmd/gatehouse
// makes to register plugins with plugins/host. It knows nothing of wazero.
package pluginreg

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/gatehouse-dev/gatehouse/edge/journal"
	"github.com/gatehouse-dev/gatehouse/edge/store"
	"github.com/gatehouse-dev/gatehouse/edge/tenancy"
)

// Plugin registers a Wasm module for a project's hook points.
type Plugin struct {
	Name       string            `json:"name"`
	Module     string            `json:"module"`
	Hooks      []string          `json:"hooks"`
	OnError    string            `json:"onError,omitempty"` // open | closed
	AllowHosts []string          `json:"allowHosts,omitempty"`
	Limits     Limits            `json:"limits,omitempty"`
	Config     map[string]string `json:"config,omitempty"`
}

// Limits caps one plugin's memory and time per call.
type Limits struct {
	MemoryMB  int `json:"memoryMB,omitempty"`
	TimeoutMs int `json:"timeoutMs,omitempty"`
}

// MaxModuleBytes caps an uploaded plugin module.
const MaxModuleBytes = 32 << 20

// Errors of uploads.
var (
	// ErrNotWasm reports an upload that is not a WebAssembly binary module.
	ErrNotWasm = errors.New("pluginreg: not a WebAssembly module (missing \\0asm version 1 header)")
	// ErrTooLarge reports an upload over MaxModuleBytes.
	ErrTooLarge = errors.New("pluginreg: module too large")
	// ErrNotFound reports a module that was never uploaded.
	ErrNotFound = errors.New("pluginreg: not found")
)

// Key layout: plugins/reg/<project>/<name> -> Plugin; plugins/module/<project>/<name> -> Wasm;
// plugins/modmeta/<project>/<name> -> its size, digest and upload time (manage.go).
func regKey(project, name string) []byte    { return store.Key("plugins", "reg", project, name) }
func regPrefix(project string) []byte       { return store.Prefix("plugins", "reg", project) }
func moduleKey(project, name string) []byte { return store.Key("plugins", "module", project, name) }

var regRoot = store.Prefix("plugins", "reg")

var hooks = map[string]bool{"forms.submit": true, "records.read": true, "email.send": true, "captcha.verify": true}

// Checker vets plugins before they are stored (decisions.md 8.5): the composition root gives
// one backed by the Wasm host, so that a module the host would refuse makes the apply (or the
// upload) fail with the reason instead of being stored and then silently running nothing. Both
// methods return nil when the host would run the plugin.
type Checker interface {
	// CheckPlugin reports why the host would refuse plugin p of project.
	CheckPlugin(ctx context.Context, project string, p Plugin) error
	// CheckModule reports why the host would refuse module bytes uploaded under name.
	CheckModule(ctx context.Context, project, name string, module []byte) error
}

// Section is the plugins key of a project in the tenants document. With a registry whose
// checker is set, it vets every plugin with the host before the apply's transaction.
type Section struct{ r *Registry }

var (
	_ tenancy.Section = Section{}
	_ tenancy.Vetter  = Section{}
)

// Vet implements tenancy.Vetter: each plugin the host would refuse is a problem.
func (s Section) Vet(ctx context.Context, c *tenancy.Check, raw json.RawMessage) error {
	ck := s.r.checker()
	if ck == nil {
		return nil
	}
	var ps []Plugin
	if err := tenancy.Decode(raw, &ps); err != nil {
		return nil // Check reported it
	}
	for i, p := range ps {
		if err := ck.CheckPlugin(ctx, c.Project, p); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			c.Add(fmt.Sprintf("[%d]", i), "%s", err.Error())
		}
	}
	return nil
}

// Name implements tenancy.Section.
func (Section) Name() string { return "plugins" }

// Level implements tenancy.Section.
func (Section) Level() tenancy.Level { return tenancy.ProjectLevel }

// Check implements tenancy.Section.
func (Section) Check(c *tenancy.Check, raw json.RawMessage) {
	var ps []Plugin
	if !c.Decode(raw, &ps) {
		return
	}
	seen := map[string]string{}
	for i, pl := range ps {
		path := fmt.Sprintf("[%d]", i)
		if !tenancy.IsName(pl.Name) {
			c.Add(path+".name", "must be 1-63 letters, digits, - or _")
		} else {
			c.Unique(seen, pl.Name, path, "plugin")
		}
		for _, p := range checkPlugin(pl) {
			c.Add(path+"."+p.Path, "%s", p.Message)
		}
	}
}

// checkPlugin reports what is wrong with one registration besides its name (paths relative to
// it): the document's check and the admin API's PUT share it.
func checkPlugin(pl Plugin) []tenancy.Problem {
	var out []tenancy.Problem
	add := func(path, format string, args ...any) {
		out = append(out, tenancy.Problem{Path: path, Message: fmt.Sprintf(format, args...)})
	}
	if pl.Module == "" {
		add("module", "is required: a .wasm path or the name of an uploaded module")
	}
	if len(pl.Hooks) == 0 {
		add("hooks", "must name at least one hook")
	}
	for j, h := range pl.Hooks {
		if !hooks[h] {
			add(fmt.Sprintf("hooks[%d]", j), "%q is not forms.submit, records.read, email.send or captcha.verify", h)
		}
	}
	if pl.OnError != "" && pl.OnError != "open" && pl.OnError != "closed" {
		add("onError", "must be open or closed")
	}
	for j, h := range pl.AllowHosts {
		// The patterns themselves (host, host:port, *.domain, https://host, [IPv6]:port) are
		// the plugin host's to judge: it refuses a bad one at apply with PLUGIN_REFUSED.
		if h == "" || len(h) > 300 || strings.ContainsAny(h, " \t\r\n") {
			add(fmt.Sprintf("allowHosts[%d]", j), "%q is not a host pattern", h)
		}
	}
	if pl.Limits.MemoryMB < 0 || pl.Limits.MemoryMB > 1024 {
		add("limits.memoryMB", "must be from 8 to 1024")
	} else if pl.Limits.MemoryMB != 0 && pl.Limits.MemoryMB < 8 {
		add("limits.memoryMB", "must be from 8 to 1024 (Go guests need at least 8)")
	}
	if pl.Limits.TimeoutMs < 0 || pl.Limits.TimeoutMs > 60000 {
		add("limits.timeoutMs", "must be from 1 to 60000")
	}
	return out
}

// Apply implements tenancy.Section: registrations are upserted by name.
func (Section) Apply(w *tenancy.Writer, raw json.RawMessage) error {
	var ps []Plugin
	if err := tenancy.Decode(raw, &ps); err != nil {
		return err
	}
	for _, p := range ps {
		if err := w.Put(regKey(w.Project, p.Name), "plugin", p.Name, p); err != nil {
			return err
		}
	}
	return nil
}

// Prune implements tenancy.Section. Uploaded modules are kept: they are not document entries.
func (Section) Prune(w *tenancy.Writer) error {
	return w.Prune(regRoot, "plugin", tenancy.ProjectLevel, nil, nil)
}

// Registry reads registrations and keeps uploaded modules.
type Registry struct {
	db  *store.DB
	ten *tenancy.Service
	mu  sync.RWMutex
	chk Checker
}

// CheckWith makes every later apply and upload ask c first. Call it while wiring, before the
// registry takes requests.
func (r *Registry) CheckWith(c Checker) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.chk = c
}

func (r *Registry) checker() Checker {
	if r == nil {
		return nil
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.chk
}

// Options configures New.
type Options struct {
	// DB is the store holding the project's plugins section and uploaded modules (required).
	DB *store.DB
	// Tenancy checks projects and hears of uploads (required).
	Tenancy *tenancy.Service
}

// New returns the registry over Options.DB. It starts nothing.
func New(o Options) *Registry { return &Registry{db: o.DB, ten: o.Tenancy} }

// Sections implements tenancy.Owner.
func (r *Registry) Sections() []tenancy.Section { return []tenancy.Section{Section{r}} }

// Changed implements tenancy.Owner; the registry caches nothing.
func (r *Registry) Changed(context.Context, []journal.Change) {}

var _ tenancy.Owner = (*Registry)(nil)

// Plugins returns a project's registrations in name order.
func (r *Registry) Plugins(ctx context.Context, project string) ([]Plugin, error) {
	var out []Plugin
	err := r.db.View(ctx, func(txn *store.Txn) error {
		return txn.Iterate(store.IterOptions{Prefix: regPrefix(project)}, func(_, v []byte) (bool, error) {
			var p Plugin
			if err := json.Unmarshal(v, &p); err != nil {
				return false, err
			}
			out = append(out, p)
			return true, nil
		})
	})
	return out, err
}

// IsModulePath reports whether a plugin's module names a file (a path ending in .wasm or
// holding a slash) rather than a module uploaded through the admin API.
func IsModulePath(module string) bool {
	return strings.HasSuffix(module, ".wasm") || strings.Contains(module, "/")
}

// PutModule stores an uploaded Wasm module for project under name; plugins of the project whose
// `module` is that name use it. Listeners hear a Change of kind "module".
func (r *Registry) PutModule(ctx context.Context, project, name string, module []byte) error {
	if !tenancy.IsName(name) {
		return &tenancy.InvalidError{Problems: []tenancy.Problem{{Path: "name", Message: "must be 1-63 letters, digits, - or _"}}}
	}
	if len(module) > MaxModuleBytes {
		return ErrTooLarge
	}
	if len(module) < 8 || !bytes.Equal(module[:8], []byte("\x00asm\x01\x00\x00\x00")) {
		return ErrNotWasm
	}
	if _, err := r.ten.Project(ctx, project); err != nil {
		return fmt.Errorf("project %q: %w", project, err)
	}
	if c := r.checker(); c != nil {
		if err := c.CheckModule(ctx, project, name, module); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return &tenancy.RefusedError{Problems: []tenancy.Problem{{Path: "body", Message: err.Error()}}}
		}
	}
	changes := []journal.Change{{Op: "updated", Kind: "module", Project: project, Name: name}}
	err := r.db.Update(ctx, func(txn *store.Txn) error {
		if err := txn.Set(moduleKey(project, name), module); err != nil {
			return err
		}
		meta, err := json.Marshal(newModuleMeta(module, time.Now()))
		if err != nil {
			return err
		}
		if err := txn.Set(moduleMetaKey(project, name), meta); err != nil {
			return err
		}
		return r.ten.Record(txn, changes) // journaled with the module (edge/bus)
	})
	if err == nil {
		r.ten.Notify(ctx, changes)
	}
	return err
}

// Module returns an uploaded module, or ErrNotFound.
func (r *Registry) Module(ctx context.Context, project, name string) ([]byte, error) {
	var out []byte
	err := r.db.View(ctx, func(txn *store.Txn) error {
		v, err := txn.Get(moduleKey(project, name))
		if errors.Is(err, store.ErrNotFound) {
			return ErrNotFound
		}
		out = v
		return err
	})
	return out, err
}
