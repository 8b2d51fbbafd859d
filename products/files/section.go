package files

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/gatehouse-dev/gatehouse/edge/journal"
	"github.com/gatehouse-dev/gatehouse/edge/store"
	"github.com/gatehouse-dev/gatehouse/edge/tenancy"
)

// Named variants are stored one per key: files/v/<project>/<name> -> NamedVariant.
func variantKey(project, name string) []byte { return store.Key(prefix, "v", project, name) }

// variantRoot is the prefix of every project's named variants.
var variantRoot = store.Prefix(prefix, "v")

// NamedVariant is a variant a project names in the tenants document, as stored (defaults
// filled in).
type NamedVariant struct {
	Name string `json:"name"`
	Spec
}

// documentVariant is one entry of files.variants as the document writes it.
type documentVariant struct {
	Name    string `json:"name"`
	Width   *int   `json:"width"`
	Height  *int   `json:"height"`
	Fit     string `json:"fit"`
	Format  string `json:"format"`
	Quality *int   `json:"quality"`
}

func (d documentVariant) options() VariantOptions {
	return VariantOptions{Width: d.Width, Height: d.Height, Fit: d.Fit, Format: d.Format, Quality: d.Quality}
}

// settings is the files key of a project in the tenants document.
type settings struct {
	Variants []documentVariant `json:"variants"`
}

// Section is the files key of a project in the tenants document: its named image variants
// (decisions.md 9.3), served at {asset_host}/<org>/<name>/<asset_id>/<filename>.
type Section struct{}

var _ tenancy.Section = Section{}

// Name implements tenancy.Section.
func (Section) Name() string { return "files" }

// Level implements tenancy.Section.
func (Section) Level() tenancy.Level { return tenancy.ProjectLevel }

// Check implements tenancy.Section: names [a-z0-9-]{1,32}, unique, not "originals"; options as
// for ad-hoc variants.
func (Section) Check(c *tenancy.Check, raw json.RawMessage) {
	var m settings
	if !c.Decode(raw, &m) {
		return
	}
	if len(m.Variants) > MaxVariants {
		c.Add(".variants", "at most %d variants", MaxVariants)
	}
	seen := map[string]string{}
	for i, v := range m.Variants {
		sub := fmt.Sprintf(".variants[%d]", i)
		switch {
		case v.Name == "originals":
			c.Add(sub+".name", "originals names the uploaded bytes; choose another name")
		case !IsVariantName(v.Name):
			c.Add(sub+".name", "must be 1-32 of a-z, 0-9 and -")
		default:
			c.Unique(seen, v.Name, sub, "variant")
		}
		v.options().Spec(func(field, problem string) { c.Add(sub+"."+field, "%s", problem) })
	}
}

// Apply implements tenancy.Section: variants are upserted by name.
func (Section) Apply(w *tenancy.Writer, raw json.RawMessage) error {
	var m settings
	if err := tenancy.Decode(raw, &m); err != nil {
		return err
	}
	for _, v := range m.Variants {
		spec, ok := v.options().Spec(func(string, string) {})
		if !ok {
			return fmt.Errorf("files: variant %q is invalid", v.Name)
		}
		if err := w.Put(variantKey(w.Project, v.Name), "variant", v.Name, NamedVariant{Name: v.Name, Spec: spec}); err != nil {
			return err
		}
	}
	return nil
}

// Prune implements tenancy.Section.
func (Section) Prune(w *tenancy.Writer) error {
	return w.Prune(variantRoot, "variant", tenancy.ProjectLevel, nil, nil)
}

// Sections implements tenancy.Owner: the files key of every project.
func (s *Service) Sections() []tenancy.Section { return []tenancy.Section{Section{}} }

// Changed drops the cached variants an apply changed. Its signature fits tenancy's OnChange.
func (s *Service) Changed(ctx context.Context, changes []journal.Change) {
	s.variants.Changed(ctx, changes)
}

var _ tenancy.Owner = (*Service)(nil)

// namedVariant returns project's variant called name, ErrVariantNotFound when there is none.
func (s *Service) namedVariant(ctx context.Context, project, name string) (Spec, error) {
	if project == "" || !IsVariantName(name) {
		return Spec{}, ErrVariantNotFound // an org-level asset has no project to name variants
	}
	v, err := s.variants.Get(ctx, project, name, func(ctx context.Context) (*NamedVariant, error) {
		var out *NamedVariant
		err := s.o.DB.View(ctx, func(txn *store.Txn) error {
			raw, err := txn.Get(variantKey(project, name))
			if errors.Is(err, store.ErrNotFound) {
				return nil
			}
			if err != nil {
				return err
			}
			out = new(NamedVariant)
			return json.Unmarshal(raw, out)
		})
		return out, err
	})
	if err != nil {
		return Spec{}, err
	}
	if v == nil {
		return Spec{}, ErrVariantNotFound
	}
	return v.Spec, nil
}
