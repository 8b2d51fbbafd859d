package tenancy

import (
	"context"
	"fmt"
	"strings"
)

// PluginChecker vets plugins before they are stored (decisions.md 8.5): the composition root
// gives one backed by the Wasm host, so that a module the host would refuse makes the apply
// (or the upload) fail with the reason instead of being stored and then silently running
// nothing. Both methods return nil when the host would run the plugin.
type PluginChecker interface {
	// CheckPlugin reports why the host would refuse plugin p of project.
	CheckPlugin(ctx context.Context, project string, p Plugin) error
	// CheckModule reports why the host would refuse module bytes uploaded under name.
	CheckModule(ctx context.Context, project, name string, module []byte) error
}

// RefusedError is a plugin or module the plugin host refuses; nothing was stored. The edge
// answers it with 400 PLUGIN_REFUSED.
type RefusedError struct {
	Problems []Problem // Path names the plugin ("orgs[0].projects[1].plugins[0]") or the upload ("body")
}

// Error implements error: every refusal, one per line.
func (e *RefusedError) Error() string {
	var b strings.Builder
	b.WriteString("tenancy: plugin refused")
	for _, p := range e.Problems {
		b.WriteString("\n  ")
		b.WriteString(p.String())
	}
	return b.String()
}

// CheckPluginsWith makes every later Apply and PutModule ask c first. Call it while wiring,
// before the service takes requests.
func (s *Service) CheckPluginsWith(c PluginChecker) {
	s.listenMu.Lock()
	defer s.listenMu.Unlock()
	s.pluginCheck = c
}

func (s *Service) pluginChecker() PluginChecker {
	s.listenMu.RLock()
	defer s.listenMu.RUnlock()
	return s.pluginCheck
}

// checkPlugins asks the checker about every plugin of doc.
func (s *Service) checkPlugins(ctx context.Context, doc *Document) error {
	c := s.pluginChecker()
	if c == nil {
		return nil
	}
	var problems []Problem
	for oi, o := range doc.Orgs {
		for pi, p := range o.Projects {
			for i, pl := range p.Plugins {
				if err := c.CheckPlugin(ctx, p.ID, pl); err != nil {
					if ctx.Err() != nil {
						return ctx.Err()
					}
					problems = append(problems, Problem{Path: fmt.Sprintf("orgs[%d].projects[%d].plugins[%d]", oi, pi, i), Message: err.Error()})
				}
			}
		}
	}
	if problems != nil {
		return &RefusedError{Problems: problems}
	}
	return nil
}

// checkModule asks the checker about an upload.
func (s *Service) checkModule(ctx context.Context, project, name string, module []byte) error {
	c := s.pluginChecker()
	if c == nil {
		return nil
	}
	if err := c.CheckModule(ctx, project, name, module); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return &RefusedError{Problems: []Problem{{Path: "body", Message: err.Error()}}}
	}
	return nil
}
