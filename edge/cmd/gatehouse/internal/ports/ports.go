// Package ports holds the adapters the composition root gives the product modules as ports
// (module.Deps.Ports): the products' event interfaces over the webhooks service, forms' Mailer
// over the email product, and the plugin hooks over the Wasm host. They live beside main,
// not in the products, because products never import each other nor the plugin host; they
// hold no rule of their own (docs/architecture.md, "The product module shape").
package ports

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/gatehouse-dev/gatehouse/edge/apierr"
	"github.com/gatehouse-dev/gatehouse/edge/module"
	"github.com/gatehouse-dev/gatehouse/edge/store"
	"github.com/gatehouse-dev/gatehouse/edge/webhooks"
	"github.com/gatehouse-dev/gatehouse/plugins/host"
	"github.com/gatehouse-dev/gatehouse/products/email"
	"github.com/gatehouse-dev/gatehouse/products/files"
	"github.com/gatehouse-dev/gatehouse/products/forms"
	"github.com/gatehouse-dev/gatehouse/products/records"
)

// For returns the ports of the products: the webhook events over hooks (nil: none queued),
// the plugin hooks over h (nil: no plugins), and forms' Mailer over the email service among
// provided (what the modules built so far provide).
func For(hooks *webhooks.Service, h *host.Host, provided module.Ports) module.Ports {
	ps := module.Ports{EmailEvents{hooks}, FileEvents{hooks}}
	if hooks != nil {
		ps = append(ps, FormWebhooks{hooks})
	}
	if h != nil {
		ps = append(ps, EmailPlugins{h}, FormsPlugins{h}, RecordsPlugins{h})
	}
	if mail := module.Port[*email.Service](provided); mail != nil {
		ps = append(ps, FormMailer{mail})
	}
	return ps
}

// The adapters below join the products' event interfaces to the webhooks service and the
// email product (decisions.md 8.3). What they queue is written inside the transaction of the
// state change it reports, so it commits with that change.

var (
	_ forms.Webhooks = FormWebhooks{}
	_ forms.Mailer   = FormMailer{}
	_ email.Events   = EmailEvents{}
	_ files.Events   = FileEvents{}
)

// FormWebhooks gives the forms product its webhook events (forms.Webhooks).
type FormWebhooks struct{ Hooks *webhooks.Service }

// PrepareEvent prepares the event; its write queues it in the submission's transaction.
func (f FormWebhooks) PrepareEvent(ctx context.Context, project, typ string, data any) (func(*store.Txn) error, error) {
	b, err := f.Hooks.Prepare(ctx, webhooks.Event{Type: typ, Project: project, Data: data})
	if err != nil {
		return nil, err
	}
	return b.Write, nil
}

// FormMailer sends the forms product's emails through the email product (forms.Mailer).
type FormMailer struct{ Mail *email.Service }

// PrepareMail prepares m as an email send of project; its write queues it.
func (f FormMailer) PrepareMail(ctx context.Context, project string, m forms.Mail) (func(*store.Txn) error, error) {
	req := email.SendRequest{To: &email.Address{Email: m.To}, TemplateID: m.TemplateID, Variables: m.Variables,
		Tags: []string{m.Tag}, Metadata: m.Metadata}
	if m.TemplateID == "" {
		req.Subject, req.BodyText = &m.Subject, &m.Text
	}
	p, err := f.Mail.Prepare(ctx, project, req)
	if err != nil {
		return nil, err
	}
	return p.Queue, nil
}

// EmailEvents queues an email.<status> event for each status move, ordered per message.
type EmailEvents struct{ Hooks *webhooks.Service }

func (e EmailEvents) MessageMoved(ctx context.Context, txn *store.Txn, m *email.Message, to email.Status, at time.Time) error {
	data := map[string]any{"id": m.ID, "project": m.Project, "status": to, "to": m.To, "from": m.From,
		"subject": m.Subject, "tags": m.Tags, "metadata": m.Metadata}
	if n := len(m.Log); n > 0 && m.Log[n-1].Detail != "" {
		data["detail"] = m.Log[n-1].Detail
	}
	return emit(ctx, e.Hooks, txn, "email."+string(to), m.Project, m.ID, at, data)
}

// FileEvents queues asset.completed for a project's asset.
type FileEvents struct{ Hooks *webhooks.Service }

func (f FileEvents) AssetCompleted(ctx context.Context, txn *store.Txn, project string, v files.View) error {
	if project == "" {
		return nil // an org-level asset: webhooks belong to projects
	}
	return emit(ctx, f.Hooks, txn, "asset.completed", project, "", time.Time{}, v)
}

// emit queues one event inside the caller's transaction; a nil service (not wired) drops it.
func emit(ctx context.Context, svc *webhooks.Service, txn *store.Txn, typ, project, order string, at time.Time, data any) error {
	if svc == nil {
		return nil
	}
	return svc.Enqueue(ctx, txn, webhooks.Event{Type: typ, Project: project, Order: order, At: at, Data: data})
}

// pluginError is the API error of a fail-closed plugin that gave no verdict: the product's
// busy error when the host was over budget, its failed error otherwise.
func pluginError(err, failed, busy error) error {
	if errors.Is(err, host.ErrBusy) {
		return fmt.Errorf("%w: %v", busy, err)
	}
	return fmt.Errorf("%w: %v", failed, err)
}

// FormsPlugins gives the forms product its forms.submit filter and plugin captcha verifiers.
type FormsPlugins struct{ Host *host.Host }

var (
	_ forms.Plugins  = FormsPlugins{}
	_ forms.Verifier = pluginVerifier{}
	_ email.SendHook = EmailPlugins{}
)

// FilterSubmission runs the project's forms.submit plugins.
func (f FormsPlugins) FilterSubmission(ctx context.Context, in forms.FilterInput) (map[string]any, error) {
	v, err := f.Host.FormsSubmit(ctx, in.Project, in.Form, in.Data)
	if err != nil {
		return nil, pluginError(err, forms.ErrPluginFailed, forms.ErrPluginBusy)
	}
	switch v.Action {
	case host.Reject:
		return nil, apierr.PluginRejected(v.Code, v.Message, v.Plugin)
	case host.Rewrite:
		return v.Data, nil
	}
	return in.Data, nil
}

// CaptchaVerifier returns the verifier of a plugin registered for captcha.verify.
func (f FormsPlugins) CaptchaVerifier(_ context.Context, project, plugin string) (forms.Verifier, error) {
	for _, name := range f.Host.Plugins(project) {
		if name == plugin {
			return pluginVerifier{h: f.Host, plugin: plugin}, nil
		}
	}
	return nil, fmt.Errorf("plugin %q is not registered for project %q", plugin, project)
}

type pluginVerifier struct {
	h      *host.Host
	plugin string
}

// Verify asks the plugin; a failed call (fail-closed) is no verdict.
func (p pluginVerifier) Verify(ctx context.Context, ch forms.Challenge) (forms.Verdict, error) {
	ok, err := p.h.CaptchaVerify(ctx, ch.Project, p.plugin, ch.Token, ch.RemoteIP)
	if err != nil {
		return forms.Verdict{}, err
	}
	return forms.Verdict{Success: ok}, nil
}

// RecordsPlugins runs the records.read plugins over a page of records; a fail-closed plugin
// that gives no verdict answers 503 PLUGIN_FAILED (or PLUGIN_BUSY), as for the other hooks.
type RecordsPlugins struct{ Host *host.Host }

var _ records.ReadFilter = RecordsPlugins{}

// RecordsRead runs the project's records.read plugins.
func (r RecordsPlugins) RecordsRead(ctx context.Context, project, collection string, page []json.RawMessage) ([]json.RawMessage, error) {
	out, err := r.Host.RecordsRead(ctx, project, collection, page)
	if err != nil {
		return nil, pluginError(err, records.ErrPluginFailed, records.ErrPluginBusy)
	}
	return out, nil
}

// EmailPlugins runs the email.send plugins on a message before it is queued.
type EmailPlugins struct{ Host *host.Host }

// FilterSend lets plugins refuse a send or rewrite its tags and template variables (the email
// service renders the template again with rewritten variables).
func (e EmailPlugins) FilterSend(ctx context.Context, project string, d *email.Draft) error {
	m := d.Message
	in := host.EmailInput{To: host.Address{Email: m.To.Email, Name: m.To.Name}, From: &host.Address{Email: m.From.Email, Name: m.From.Name},
		TemplateID: m.TemplateID, Subject: m.Subject, BodyHTML: m.HTML, BodyText: m.Text, Tags: m.Tags, Metadata: m.Metadata}
	if m.ReplyTo != nil {
		in.ReplyTo = &host.Address{Email: m.ReplyTo.Email, Name: m.ReplyTo.Name}
	}
	if d.Variables != nil {
		in.Variables = make(map[string]any, len(d.Variables))
		for k, v := range d.Variables {
			in.Variables[k] = v
		}
	}
	v, err := e.Host.EmailSend(ctx, project, in)
	if err != nil {
		return pluginError(err, email.ErrPluginFailed, email.ErrPluginBusy)
	}
	switch v.Action {
	case host.Reject:
		return apierr.PluginRejected(v.Code, v.Message, v.Plugin)
	case host.Rewrite:
		m.Tags = v.Tags
		if d.Variables != nil && v.Variables != nil {
			vars, bad, err := email.ParseVars(v.Variables)
			if err != nil {
				return fmt.Errorf("%w: %s: variable %q: %v", email.ErrPluginFailed, v.Plugin, bad, err)
			}
			d.Variables = vars
		}
	}
	return nil
}
