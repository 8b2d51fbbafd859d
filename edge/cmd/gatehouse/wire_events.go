package main

import (
	"context"
	"time"

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
	_ forms.Webhooks = formWebhooks{}
	_ forms.Mailer   = formMailer{}
	_ email.Events   = emailEvents{}
	_ files.Events   = fileEvents{}
)

// formWebhooks gives the forms product its webhook events (forms.Webhooks).
type formWebhooks struct{ hooks *webhooks.Service }

// PrepareEvent prepares the event; its write queues it in the submission's transaction.
func (f formWebhooks) PrepareEvent(ctx context.Context, project, typ string, data any) (func(*store.Txn) error, error) {
	b, err := f.hooks.Prepare(ctx, webhooks.Event{Type: typ, Project: project, Data: data})
	if err != nil {
		return nil, err
	}
	return b.Write, nil
}

// formMailer sends the forms product's emails through the email product (forms.Mailer).
type formMailer struct{ mail *email.Service }

// PrepareMail prepares m as an email send of project; its write queues it.
func (f formMailer) PrepareMail(ctx context.Context, project string, m forms.Mail) (func(*store.Txn) error, error) {
	req := email.SendRequest{To: &email.Address{Email: m.To}, TemplateID: m.TemplateID, Variables: m.Variables,
		Tags: []string{m.Tag}, Metadata: m.Metadata}
	if m.TemplateID == "" {
		req.Subject, req.BodyText = &m.Subject, &m.Text
	}
	p, err := f.mail.Prepare(ctx, project, req)
	if err != nil {
		return nil, err
	}
	return p.Queue, nil
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
