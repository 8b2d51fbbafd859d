package forms

import (
	"context"
	"encoding/json"
	"fmt"
	"net/mail"
	"sort"
	"strings"

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

// Events is told of each accepted submission. It prepares what to queue (the webhook event,
// the notification emails) outside the transaction and returns the function that writes it
// inside the transaction storing the submission: they commit together (a crash loses none of
// them), and nothing is queued for a refused submission (captcha, rate limit, plugin,
// validation: those never reach it). An error aborts the submission.
type Events interface {
	SubmissionAccepted(ctx context.Context, a Accepted) (write func(*store.Txn) error, err error)
}

// Accepted is an accepted submission as Events sees it. Submission.Files carry their admin
// download URLs.
type Accepted struct {
	Project    string
	Form       Form
	Submission Submission
}

// accepted builds what Events sees of a stored submission (file links filled in).
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
