package pluginreg

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/gatehouse-dev/gatehouse/edge/apitime"
	"github.com/gatehouse-dev/gatehouse/edge/journal"
	"github.com/gatehouse-dev/gatehouse/edge/store"
	"github.com/gatehouse-dev/gatehouse/edge/tenancy"
)

// moduleMetaKey: plugins/modmeta/<project>/<name> -> moduleMeta, written with each upload.
func moduleMetaKey(project, name string) []byte {
	return store.Key("plugins", "modmeta", project, name)
}
func modulePrefix(project string) []byte { return store.Prefix("plugins", "module", project) }

// moduleMeta is what an upload records beside the module's bytes.
type moduleMeta struct {
	Size       int    `json:"size"`
	SHA256     string `json:"sha256"`
	UploadedAt string `json:"uploadedAt"`
}

func newModuleMeta(module []byte, now time.Time) moduleMeta {
	sum := sha256.Sum256(module)
	return moduleMeta{Size: len(module), SHA256: hex.EncodeToString(sum[:]), UploadedAt: apitime.Format(now)}
}

// ModuleInfo is an uploaded module as the dashboard lists it: its size, digest and upload time
// (empty for a module uploaded before uploads recorded them), and the registrations that run it
// with their hooks.
type ModuleInfo struct {
	Name       string   `json:"name"`
	Size       int      `json:"size"`
	SHA256     string   `json:"sha256,omitempty"`
	UploadedAt string   `json:"uploadedAt,omitempty"`
	Plugins    []string `json:"plugins"`
	Hooks      []string `json:"hooks"`
}

// Modules returns a project's uploaded modules in name order.
func (r *Registry) Modules(ctx context.Context, project string) ([]ModuleInfo, error) {
	regs, err := r.Plugins(ctx, project)
	if err != nil {
		return nil, err
	}
	out := []ModuleInfo{}
	err = r.db.View(ctx, func(txn *store.Txn) error {
		var names []string
		err := txn.Iterate(store.IterOptions{Prefix: modulePrefix(project), KeysOnly: true}, func(k, _ []byte) (bool, error) {
			names = append(names, store.LastPart(k))
			return true, nil
		})
		if err != nil {
			return err
		}
		for _, name := range names {
			m := ModuleInfo{Name: name, Plugins: []string{}, Hooks: []string{}}
			raw, err := txn.Get(moduleMetaKey(project, name))
			switch {
			case errors.Is(err, store.ErrNotFound): // uploaded before uploads kept their meta
				b, err := txn.Get(moduleKey(project, name))
				if err != nil {
					return err
				}
				m.Size = len(b)
			case err != nil:
				return err
			default:
				var meta moduleMeta
				if err := json.Unmarshal(raw, &meta); err != nil {
					return fmt.Errorf("pluginreg: module meta %s/%s: %w", project, name, err)
				}
				m.Size, m.SHA256, m.UploadedAt = meta.Size, meta.SHA256, meta.UploadedAt
			}
			for _, p := range regs {
				if p.Module != name {
					continue
				}
				m.Plugins = append(m.Plugins, p.Name)
				for _, h := range p.Hooks {
					if !slices.Contains(m.Hooks, h) {
						m.Hooks = append(m.Hooks, h)
					}
				}
			}
			out = append(out, m)
		}
		return nil
	})
	return out, err
}

// PutPlugin creates or replaces a project's registration as the tenants document would (the
// same checks, then the host's vetting when a checker is set): the dashboard attaches a module
// to hooks with it. It answers whether the registration is new. An invalid one is a
// *tenancy.InvalidError (paths relative to it), one the host refuses a *tenancy.RefusedError,
// an unknown project tenancy.ErrNotFound. A later apply naming the plugin replaces it.
func (r *Registry) PutPlugin(ctx context.Context, project string, p Plugin) (created bool, err error) {
	var problems []tenancy.Problem
	if !tenancy.IsName(p.Name) {
		problems = append(problems, tenancy.Problem{Path: "name", Message: "must be 1-63 letters, digits, - or _"})
	}
	problems = append(problems, checkPlugin(p)...)
	if len(problems) > 0 {
		return false, &tenancy.InvalidError{Problems: problems}
	}
	if _, err := r.ten.Project(ctx, project); err != nil {
		return false, err
	}
	if ck := r.checker(); ck != nil {
		if err := ck.CheckPlugin(ctx, project, p); err != nil {
			if ctx.Err() != nil {
				return false, ctx.Err()
			}
			return false, &tenancy.RefusedError{Problems: []tenancy.Problem{{Path: "module", Message: err.Error()}}}
		}
	}
	raw, err := json.Marshal(p)
	if err != nil {
		return false, err
	}
	var changes []journal.Change
	err = r.db.Update(ctx, func(txn *store.Txn) error {
		old, err := txn.Get(regKey(project, p.Name))
		if errors.Is(err, store.ErrNotFound) {
			old = nil
		} else if err != nil {
			return err
		}
		if err := txn.Set(regKey(project, p.Name), raw); err != nil {
			return err
		}
		op := "updated"
		if old == nil {
			op, created = "created", true
		}
		changes = []journal.Change{{Op: op, Kind: "plugin", Project: project, Name: p.Name, Old: old, New: raw}}
		return r.ten.Record(txn, changes)
	})
	if err != nil {
		return false, err
	}
	r.ten.Notify(ctx, changes)
	return created, nil
}

// DeletePlugin removes a project's registration (ErrNotFound when there is none): its module
// stays uploaded, attached to nothing.
func (r *Registry) DeletePlugin(ctx context.Context, project, name string) error {
	var changes []journal.Change
	err := r.db.Update(ctx, func(txn *store.Txn) error {
		old, err := txn.Get(regKey(project, name))
		if errors.Is(err, store.ErrNotFound) {
			return ErrNotFound
		}
		if err != nil {
			return err
		}
		if err := txn.Delete(regKey(project, name)); err != nil {
			return err
		}
		changes = []journal.Change{{Op: "deleted", Kind: "plugin", Project: project, Name: name, Old: old}}
		return r.ten.Record(txn, changes)
	})
	if err != nil {
		return err
	}
	r.ten.Notify(ctx, changes)
	return nil
}

// plugin returns one registration of a project, or ErrNotFound.
func (r *Registry) plugin(ctx context.Context, project, name string) (Plugin, error) {
	var p Plugin
	err := r.db.View(ctx, func(txn *store.Txn) error {
		raw, err := txn.Get(regKey(project, name))
		if errors.Is(err, store.ErrNotFound) {
			return ErrNotFound
		}
		if err != nil {
			return err
		}
		return json.Unmarshal(raw, &p)
	})
	return p, err
}

// Attach adds hook to registration name, creating it to run module when there is none (its
// other settings, from the document or an earlier PUT, are kept). It answers the registration.
func (r *Registry) Attach(ctx context.Context, project, name, module, hook string) (Plugin, error) {
	p, err := r.plugin(ctx, project, name)
	switch {
	case errors.Is(err, ErrNotFound):
		p = Plugin{Name: name, Module: module}
	case err != nil:
		return p, err
	}
	if !slices.Contains(p.Hooks, hook) {
		p.Hooks = append(p.Hooks, hook)
	}
	_, err = r.PutPlugin(ctx, project, p)
	return p, err
}

// Detach removes hook from registration name; a registration left with no hook is removed (its
// module stays uploaded). ErrNotFound when the registration does not exist.
func (r *Registry) Detach(ctx context.Context, project, name, hook string) error {
	p, err := r.plugin(ctx, project, name)
	if err != nil {
		return err
	}
	p.Hooks = slices.DeleteFunc(p.Hooks, func(h string) bool { return h == hook })
	if len(p.Hooks) == 0 {
		return r.DeletePlugin(ctx, project, name)
	}
	_, err = r.PutPlugin(ctx, project, p)
	return err
}
