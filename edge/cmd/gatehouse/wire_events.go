package main

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/gatehouse-dev/gatehouse/edge/apierr"
	"github.com/gatehouse-dev/gatehouse/edge/store"
	"github.com/gatehouse-dev/gatehouse/edge/webhooks"
	"github.com/gatehouse-dev/gatehouse/products/email"
	"github.com/gatehouse-dev/gatehouse/products/files"
	"github.com/gatehouse-dev/gatehouse/products/forms"
)

// The adapters below join the products' event interfaces to the webhooks service and the
// email product (decisions.md 8.3). What they queue is written inside the transaction of the
// state change it reports, so it commits with that change.

var (
	_ forms.Events = formEvents{}
	_ email.Events = emailEvents{}
	_ files.Events = fileEvents{}
)

// formEvents queues, for an accepted submission, the form.submitted webhook event, one
// notification per notify address and the auto-reply.
type formEvents struct {
	hooks *webhooks.Service
	mail  *email.Service
	log   *slog.Logger
}

func (f formEvents) SubmissionAccepted(ctx context.Context, a forms.Accepted) (func(*store.Txn) error, error) {
	sub := a.Submission
	data := map[string]any{"project": a.Project, "form": a.Form.Slug, "id": sub.ID, "createdAt": sub.CreatedAt,
		"data": sub.Data, "files": filesOf(sub)}
	var writes []func(*store.Txn) error
	if f.hooks != nil {
		b, err := f.hooks.Prepare(ctx, webhooks.Event{Type: "form.submitted", Project: a.Project, Data: data})
		if err != nil {
			return nil, err
		}
		writes = append(writes, b.Write)
	}
	if f.mail != nil {
		meta := map[string]string{"form": a.Form.Slug, "submission": sub.ID}
		var reqs []email.SendRequest
		if n := a.Form.Notify; n != nil {
			for _, to := range n.To {
				req := email.SendRequest{To: &email.Address{Email: to}, Tags: []string{"form-notification"}, Metadata: meta}
				if n.Template != "" {
					req.TemplateID, req.Variables = n.Template, a.Variables()
				} else {
					subject, text := a.Summary()
					req.Subject, req.BodyText = &subject, &text
				}
				reqs = append(reqs, req)
			}
		}
		if r := a.Form.AutoReply; r != nil {
			if to := a.Value(r.EmailField); to != "" {
				reqs = append(reqs, email.SendRequest{To: &email.Address{Email: to}, TemplateID: r.Template,
					Variables: a.Variables(), Tags: []string{"form-auto-reply"}, Metadata: meta})
			}
		}
		for _, req := range reqs {
			p, err := f.mail.Prepare(ctx, a.Project, req)
			var apiErr *apierr.Error
			if errors.As(err, &apiErr) {
				// A message the email product refuses (a template variable it cannot render, an
				// address it cannot encode, a refusal or failure of the project's email.send
				// plugins, which see it like an API send) is logged and skipped, never a reason
				// to refuse the submission.
				f.log.Warn("form email not sent", "project", a.Project, "form", a.Form.Slug, "submission", sub.ID,
					"tag", req.Tags[0], "err", err)
				continue
			}
			if err != nil {
				return nil, err
			}
			writes = append(writes, p.Queue)
		}
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

func filesOf(sub forms.Submission) []map[string]any {
	out := make([]map[string]any, 0, len(sub.Files))
	for _, f := range sub.Files {
		out = append(out, map[string]any{"field": f.Field, "name": f.Name, "contentType": f.ContentType, "size": f.Size, "url": f.URL})
	}
	return out
}

// emailEvents queues an email.<status> event for each status move, ordered per message.
type emailEvents struct{ hooks *webhooks.Service }

func (e emailEvents) MessageMoved(ctx context.Context, txn *store.Txn, m *email.Message, to email.Status, at time.Time) error {
	data := map[string]any{"id": m.ID, "project": m.Project, "status": to, "to": m.To, "from": m.From,
		"subject": m.Subject, "tags": m.Tags, "metadata": m.Metadata}
	if n := len(m.Log); n > 0 && m.Log[n-1].Detail != "" {
		data["detail"] = m.Log[n-1].Detail
	}
	return emit(ctx, e.hooks, txn, "email."+string(to), m.Project, m.ID, at, data)
}

// fileEvents queues asset.completed for a project's asset.
type fileEvents struct{ hooks *webhooks.Service }

func (f fileEvents) AssetCompleted(ctx context.Context, txn *store.Txn, project string, v files.View) error {
	if project == "" {
		return nil // an org-level asset: webhooks belong to projects
	}
	return emit(ctx, f.hooks, txn, "asset.completed", project, "", time.Time{}, v)
}
