package tenancy

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
)

// Vetter is a Section that asks something slow or outside the document about its entries
// before the apply's transaction begins (the plugin host compiles a plugin's module). A problem
// it adds refuses the whole document with a *RefusedError; nothing is stored.
type Vetter interface {
	// Vet reports through c.Add why raw (the section's key of one org or project, nil when
	// absent) would be refused. It returns an error only when it could not finish (ctx ended).
	Vet(ctx context.Context, c *Check, raw json.RawMessage) error
}

// RefusedError is a document (or an upload) that a section's vetting refused; nothing was
// stored. The edge answers it with 400 and the code of the refusing section (PLUGIN_REFUSED).
type RefusedError struct {
	Problems []Problem // Path names the entry ("orgs[0].projects[1].plugins[0]") or the upload ("body")
}

// Error implements error: every refusal, one per line.
func (e *RefusedError) Error() string {
	var b strings.Builder
	b.WriteString("tenancy: refused")
	for _, p := range e.Problems {
		b.WriteString("\n  ")
		b.WriteString(p.String())
	}
	return b.String()
}

// vet runs the Vetter sections over doc.
func (s *Service) vet(ctx context.Context, doc *Document) error {
	var problems []Problem
	run := func(path string, level Level, org, project string, raw map[string]json.RawMessage) error {
		for _, sec := range s.sections {
			v, ok := sec.(Vetter)
			if !ok || sec.Level() != level {
				continue
			}
			c := &Check{Path: path + "." + sec.Name(), Org: org, Project: project, siblings: raw, problems: &problems}
			if err := v.Vet(ctx, c, raw[sec.Name()]); err != nil {
				return err
			}
		}
		return nil
	}
	for oi, o := range doc.Orgs {
		op := fmt.Sprintf("orgs[%d]", oi)
		if err := run(op, OrgLevel, o.Slug, "", o.Sections); err != nil {
			return err
		}
		for pi, p := range o.Projects {
			if err := run(fmt.Sprintf("%s.projects[%d]", op, pi), ProjectLevel, o.Slug, p.ID, p.Sections); err != nil {
				return err
			}
		}
	}
	if problems != nil {
		return doc.lines(&RefusedError{Problems: problems})
	}
	return nil
}
