package forms

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/mail"
	"sort"
	"strings"

	"github.com/gatehouse-dev/gatehouse/edge/apierr"
	"github.com/gatehouse-dev/gatehouse/edge/store"
	"github.com/gatehouse-dev/gatehouse/edge/tenancy"
)

// Notify is a form's `notify: {to: [...], template?}` (decisions.md 8.3): each accepted
// submission sends one email per address, from the project's email.from, rendered with the
// template (or a default listing the fields and file links), tagged form-notification.
type Notify struct {
	To       []string `json:"to"`
	Template string   `json:"template,omitempty"`
}

// AutoReply is a form's `autoReply: {emailField, template}`: one email to the address the
// submitter gave in emailField (a field of type email), tagged form-auto-reply.
type AutoReply struct {
	EmailField string `json:"emailField"`
	Template   string `json:"template"`
}

// Webhooks prepares one webhook event of a project (edge/webhooks, through an adapter of the
// composition root): the work is done outside the transaction and write queues the event
// inside the one that stores the submission, so they commit together.
type Webhooks interface {
	PrepareEvent(ctx context.Context, project, eventType string, data any) (write func(*store.Txn) error, err error)
}

// Mailer prepares one email of a project as the email product sends it (the project's sender,
// a template or an inline body, its email.send plugins), outside the transaction; write
// queues it inside. An *apierr.Error means the email product refuses that message.
type Mailer interface {
	PrepareMail(ctx context.Context, project string, m Mail) (write func(*store.Txn) error, err error)
}

// Mail is one email an accepted submission triggers: a notification or the auto-reply.
type Mail struct {
	To string
	// TemplateID and Variables, or (with no template) Subject and Text.
	TemplateID string
	Variables  map[string]any
	Subject    string
	Text       string
	// Tag is form-notification or form-auto-reply.
	Tag      string
	Metadata map[string]string
}

// submissionEvents prepares what an accepted submission queues with it (decisions.md 8.3):
// the form.submitted webhook event, one notification per notify address (the form's template,
// or the default summary) and the auto-reply to the address the submitter gave. A message the
// email product refuses (a variable it cannot render, an address it cannot encode, a refusal
// of the project's email.send plugins) is logged and skipped, never a reason to refuse the
// submission; any other error aborts it. Nothing reaches here for a refused submission
// (captcha, rate limit, plugin, validation). The write is nil when there is nothing to queue.
func (s *Service) submissionEvents(ctx context.Context, a Accepted) (func(*store.Txn) error, error) {
	sub := a.Submission
	var writes []func(*store.Txn) error
	if s.o.Webhooks != nil {
		data := map[string]any{"project": a.Project, "form": a.Form.Slug, "id": sub.ID, "createdAt": sub.CreatedAt,
			"data": sub.Data, "files": a.files()}
		w, err := s.o.Webhooks.PrepareEvent(ctx, a.Project, "form.submitted", data)
		if err != nil {
			return nil, err
		}
		writes = append(writes, w)
	}
	if s.o.Mailer != nil {
		for _, m := range a.mails() {
			w, err := s.o.Mailer.PrepareMail(ctx, a.Project, m)
			var apiErr *apierr.Error
			if errors.As(err, &apiErr) {
				s.log.Warn("form email not sent", "project", a.Project, "form", a.Form.Slug, "submission", sub.ID,
					"tag", m.Tag, "err", err)
				continue
			}
			if err != nil {
				return nil, err
			}
			writes = append(writes, w)
		}
	}
	if len(writes) == 0 {
		return nil, nil
	}
	return func(txn *store.Txn) error {
		for _, w := range writes {
			if err := w(txn); err != nil {
				return err
			}
		}
		return nil
	}, nil
}

// mails are the notifications (one per notify address) and the auto-reply of a.
func (a Accepted) mails() []Mail {
	meta := map[string]string{"form": a.Form.Slug, "submission": a.Submission.ID}
	var out []Mail
	if n := a.Form.Notify; n != nil {
		for _, to := range n.To {
			m := Mail{To: to, Tag: "form-notification", Metadata: meta}
			if n.Template != "" {
				m.TemplateID, m.Variables = n.Template, a.Variables()
			} else {
				m.Subject, m.Text = a.Summary()
			}
			out = append(out, m)
		}
	}
	if r := a.Form.AutoReply; r != nil {
		if to := a.Value(r.EmailField); to != "" {
			out = append(out, Mail{To: to, TemplateID: r.Template, Variables: a.Variables(), Tag: "form-auto-reply", Metadata: meta})
		}
	}
	return out
}

// files lists a's files as the form.submitted event carries them.
func (a Accepted) files() []map[string]any {
	out := make([]map[string]any, 0, len(a.Submission.Files))
	for _, f := range a.Submission.Files {
		out = append(out, map[string]any{"field": f.Field, "name": f.Name, "contentType": f.ContentType, "size": f.Size, "url": f.URL})
	}
	return out
}

// Accepted is an accepted submission as its notifications and webhook event see it.
// Submission.Files carry their admin download URLs.
type Accepted struct {
	Project    string
	Form       Form
	Submission Submission
}

// accepted builds what the events see of a stored submission (file links filled in).
func (s *Service) accepted(c *compiled, sub Submission) Accepted {
	files := make([]FileRef, len(sub.Files))
	for i, f := range sub.Files {
		f.URL = s.fileURL(c.project, c.form.Slug, sub.ID, i)
		files[i] = f
	}
	sub.Files = files
	return Accepted{Project: c.project, Form: c.form, Submission: sub}
}

// Summary is the default notification: a subject and a plain-text body listing the fields (in
// form order, with their labels) and the files with their links.
func (a Accepted) Summary() (subject, text string) {
	title := a.Form.Title
	if title == "" {
		title = a.Form.Slug
	}
	var b strings.Builder
	fmt.Fprintf(&b, "New submission to %s (%s), %s\n\n", title, a.Form.Slug, a.Submission.CreatedAt)
	for _, f := range a.Form.Fields {
		if f.Type == "file" {
			continue
		}
		label := f.Label
		if label == "" {
			label = f.Name
		}
		fmt.Fprintf(&b, "%s: %s\n", label, a.Value(f.Name))
	}
	if len(a.Submission.Files) > 0 {
		b.WriteString("\nFiles:\n")
		for _, f := range a.Submission.Files {
			fmt.Fprintf(&b, "- %s (%s, %d bytes): %s\n", f.Name, f.Field, f.Size, f.URL)
		}
	}
	fmt.Fprintf(&b, "\nSubmission %s\n", a.Submission.ID)
	return "New submission: " + title, b.String()
}

// Value is a field's value as one line of text ("" when absent; lists joined with ", ").
func (a Accepted) Value(field string) string {
	switch v := a.Submission.Data[field].(type) {
	case nil:
		return ""
	case string:
		return v
	case []any:
		parts := make([]string, 0, len(v))
		for _, x := range v {
			parts = append(parts, fmt.Sprint(x))
		}
		return strings.Join(parts, ", ")
	case []string:
		return strings.Join(v, ", ")
	default:
		raw, _ := json.Marshal(v)
		return strings.Trim(string(raw), `"`)
	}
}

// Variables are the template variables of a notification or auto-reply: every field of the
// form by name (empty when not filled in), and formSlug, formTitle, submissionId, submittedAt,
// fields (the default body's field list) and files (one line per file with its link).
func (a Accepted) Variables() map[string]any {
	out := map[string]any{}
	for _, f := range a.Form.Fields {
		out[f.Name] = a.Value(f.Name)
	}
	_, text := a.Summary()
	var files []string
	for _, f := range a.Submission.Files {
		files = append(files, f.Name+": "+f.URL)
	}
	sort.Strings(files)
	out["formSlug"] = a.Form.Slug
	out["formTitle"] = a.Form.Title
	out["submissionId"] = a.Submission.ID
	out["submittedAt"] = a.Submission.CreatedAt
	out["fields"] = text
	out["files"] = strings.Join(files, "\n")
	return out
}

// templateSlugs returns the slugs of the project's email templates (the email section).
func templateSlugs(c *tenancy.Check) map[string]bool {
	var e struct {
		Templates []struct {
			Slug string `json:"slug"`
		} `json:"templates"`
	}
	_ = json.Unmarshal(c.Sibling("email"), &e)
	out := map[string]bool{}
	for _, t := range e.Templates {
		out[t.Slug] = true
	}
	return out
}

// checkMail validates a form's notify and autoReply at fp.
func checkMail(c *tenancy.Check, fp string, f Form) {
	if f.Notify == nil && f.AutoReply == nil {
		return
	}
	templates := templateSlugs(c)
	if n := f.Notify; n != nil {
		if len(n.To) == 0 || len(n.To) > 10 {
			c.Add(fp+".notify.to", "list 1 to 10 addresses")
		}
		for i, addr := range n.To {
			if a, err := mail.ParseAddress(addr); err != nil || a.Address != addr {
				c.Add(fmt.Sprintf("%s.notify.to[%d]", fp, i), "%q is not an email address", addr)
			}
		}
		if n.Template != "" && !templates[n.Template] {
			c.Add(fp+".notify.template", "no template %q in this project's email.templates", n.Template)
		}
	}
	if r := f.AutoReply; r != nil {
		ok := false
		for _, fd := range f.Fields {
			ok = ok || (fd.Name == r.EmailField && fd.Type == "email")
		}
		if !ok {
			c.Add(fp+".autoReply.emailField", "must name a field of type email of this form")
		}
		if !templates[r.Template] {
			c.Add(fp+".autoReply.template", "no template %q in this project's email.templates", r.Template)
		}
	}
}
