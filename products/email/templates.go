package email

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"unicode/utf8"

	"github.com/gatehouse-dev/gatehouse/edge/apierr"
	"github.com/gatehouse-dev/gatehouse/edge/journal"
	"github.com/gatehouse-dev/gatehouse/edge/store"
	"github.com/gatehouse-dev/gatehouse/edge/tenancy"
)

// Bounds of a template written through the admin API (the tenants document has its own limit).
const (
	MaxTemplateSubject = 998 // RFC 5322's line limit
	MaxTemplateBody    = 256 << 10
)

// render fills the template with vars as a send does: the subject on one line, an HTML body
// escaped (with its text part given or derived) or a text body as is. missing names the
// placeholders without a value.
func (t Template) render(vars Vars) (subject, html, text string, missing []string) {
	fill := func(src string, esc bool) string {
		out, err := Render(src, vars, esc)
		var me *MissingError
		if errors.As(err, &me) {
			missing = append(missing, me.Names...)
		}
		return out
	}
	subject = strings.Join(strings.Fields(fill(t.Subject, false)), " ")
	if LooksLikeHTML(t.Body) {
		html = fill(t.Body, true)
		if t.Text != "" {
			text = fill(t.Text, false)
		} else {
			text = HTMLToText(html)
		}
	} else {
		text = fill(t.Body, false)
	}
	return subject, html, text, missing
}

// missingVariables is the 400 VALIDATION_FAILED of a render that lacked variables (nil if none).
func missingVariables(missing []string) error {
	if len(missing) == 0 {
		return nil
	}
	var problems []apierr.FieldProblem
	seen := map[string]bool{}
	for _, n := range missing {
		if !seen[n] {
			seen[n] = true
			problems = append(problems, apierr.FieldProblem{Field: "variables." + n, Problem: "required by the template"})
		}
	}
	return apierr.Validation(problems...)
}

// Templates lists a project's templates in slug order.
func (s *Service) Templates(ctx context.Context, project string) ([]Template, error) {
	out := []Template{}
	err := s.db.View(ctx, func(txn *store.Txn) error {
		return txn.Iterate(store.IterOptions{Prefix: store.Prefix(root, "tmpl", project)}, func(_, v []byte) (bool, error) {
			var t Template
			if err := json.Unmarshal(v, &t); err != nil {
				return false, err
			}
			out = append(out, t)
			return true, nil
		})
	})
	return out, err
}

// GetTemplate returns one template of a project (ErrTemplateNotFound when there is none).
func (s *Service) GetTemplate(ctx context.Context, project, slug string) (Template, error) {
	var t Template
	err := s.getJSON(ctx, templateKey(project, slug), &t)
	if errors.Is(err, errNoValue) {
		return t, ErrTemplateNotFound
	}
	return t, err
}

// checkTemplate validates a template written through the admin API.
func checkTemplate(t Template) error {
	var probs []apierr.FieldProblem
	bad := func(f, p string) { probs = append(probs, apierr.FieldProblem{Field: f, Problem: p}) }
	if !tenancy.IsSlug(t.Slug) {
		bad("slug", "must be 1-63 lower-case letters, digits, - or _")
	}
	for _, f := range []struct {
		name, v string
		max     int
		need    bool
	}{{"subject", t.Subject, MaxTemplateSubject, true}, {"body", t.Body, MaxTemplateBody, true}, {"text", t.Text, MaxTemplateBody, false}} {
		switch {
		case f.need && strings.TrimSpace(f.v) == "":
			bad(f.name, "is required")
		case len(f.v) > f.max:
			bad(f.name, "is too long")
		case !utf8.ValidString(f.v):
			bad(f.name, "must be valid UTF-8")
		}
	}
	if strings.ContainsAny(t.Subject, "\r\n") {
		bad("subject", "must be one line")
	}
	if len(probs) > 0 {
		return apierr.Validation(probs...)
	}
	return nil
}

// PutTemplate creates or replaces a project's template; created reports whether it is new.
// A later apply of a tenants document that names the slug writes the document's version over it.
func (s *Service) PutTemplate(ctx context.Context, project string, t Template) (created bool, err error) {
	if err := checkTemplate(t); err != nil {
		return false, err
	}
	raw, err := json.Marshal(t)
	if err != nil {
		return false, err
	}
	var old []byte
	var changes []journal.Change
	err = s.db.Update(ctx, func(txn *store.Txn) error {
		old, err = txn.Get(templateKey(project, t.Slug))
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return err
		}
		if err := txn.Set(templateKey(project, t.Slug), raw); err != nil {
			return err
		}
		op := "updated"
		if old == nil {
			op = "created"
		}
		changes = []journal.Change{{Op: op, Kind: "template", Project: project, Name: t.Slug, Old: old, New: raw}}
		return s.record(txn, changes)
	})
	if err != nil {
		return false, err
	}
	s.notify(ctx, changes)
	return old == nil, nil
}

// DeleteTemplate removes a project's template (ErrTemplateNotFound when there is none).
func (s *Service) DeleteTemplate(ctx context.Context, project, slug string) error {
	var old []byte
	var changes []journal.Change
	err := s.db.Update(ctx, func(txn *store.Txn) error {
		var err error
		old, err = txn.Get(templateKey(project, slug))
		if errors.Is(err, store.ErrNotFound) {
			return ErrTemplateNotFound
		}
		if err != nil {
			return err
		}
		if err := txn.Delete(templateKey(project, slug)); err != nil {
			return err
		}
		changes = []journal.Change{{Op: "deleted", Kind: "template", Project: project, Name: slug, Old: old}}
		return s.record(txn, changes)
	})
	if err != nil {
		return err
	}
	s.notify(ctx, changes)
	return nil
}

// notifier is the part of tenancy that tells every listener (this product's caches, and other
// nodes) about a change made outside an apply: Record journals it in the transaction that
// commits it (for the other nodes), Notify announces it after the commit.
type notifier interface {
	Record(txn *store.Txn, changes []journal.Change) error
	Notify(ctx context.Context, changes []journal.Change)
}

var _ notifier = (*tenancy.Service)(nil)

// record journals a template change in its transaction when tenancy can.
func (s *Service) record(txn *store.Txn, changes []journal.Change) error {
	if n, ok := s.tenants.(notifier); ok {
		return n.Record(txn, changes)
	}
	return nil
}

// notify announces a template change: through tenancy when it can, else to this service's caches.
func (s *Service) notify(ctx context.Context, changes []journal.Change) {
	if n, ok := s.tenants.(notifier); ok {
		n.Notify(ctx, changes)
		return
	}
	s.Changed(ctx, changes)
}

// Preview is a template rendered with sample variables, as a send would render it.
type Preview struct {
	Subject string `json:"subject"`
	HTML    string `json:"html"`
	Text    string `json:"text"`
}

// PreviewTemplate renders a project's template with vars; a missing variable is the same 400
// VALIDATION_FAILED a send answers.
func (s *Service) PreviewTemplate(ctx context.Context, project, slug string, vars Vars) (Preview, error) {
	t, err := s.GetTemplate(ctx, project, slug)
	if err != nil {
		return Preview{}, err
	}
	return t.preview(vars)
}

// PreviewDraft renders a template that is not stored (the editor's unsaved text), after the
// checks a save makes, so a preview never shows what a save would refuse.
func (s *Service) PreviewDraft(t Template, vars Vars) (Preview, error) {
	if err := checkTemplate(t); err != nil {
		return Preview{}, err
	}
	return t.preview(vars)
}

// preview renders t with vars; a missing variable is a 400 VALIDATION_FAILED.
func (t Template) preview(vars Vars) (Preview, error) {
	var p Preview
	var missing []string
	p.Subject, p.HTML, p.Text, missing = t.render(vars)
	return p, missingVariables(missing)
}
