package tenancy

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/gatehouse-dev/gatehouse/edge/store"
)

// This file holds the parts of the tenants document decisions.md 8.3 adds: a project's
// webhooks and a form's notify/autoReply. They live here until the sections move into their
// owners (the ownership issue); each is self-contained so the move is a file move.

// kWebhook: tenancy/webhook/<project>/<name> -> StoredWebhook.
const kWebhook = "webhook"

// WebhookEvents are the event types a webhook may subscribe to (decisions.md 8.3).
var WebhookEvents = []string{
	"form.submitted", "email.sent", "email.delivered", "email.bounced", "email.spam",
	"email.suppressed", "email.failed", "asset.completed",
}

// SecretRotationGrace is how long a replaced webhook secret keeps signing beside the new one.
const SecretRotationGrace = 24 * time.Hour

// Webhook is one `webhooks:` entry of a project.
type Webhook struct {
	Name   string   `json:"name"`
	URL    string   `json:"url"`
	Events []string `json:"events"`
	// Secret is whsec_<base64 of 24-64 bytes>; generated (and reported once) when omitted.
	Secret string `json:"secret,omitempty"`
}

// StoredWebhook is a webhook as stored: with its secret, and the secret it replaced while that
// one still signs (until PreviousUntil, RFC 3339).
type StoredWebhook struct {
	Webhook
	PreviousSecret string `json:"previousSecret,omitempty"`
	PreviousUntil  string `json:"previousUntil,omitempty"`
}

// Secrets returns the secrets that sign a delivery at now: the current one, then the
// previous one during its grace period.
func (w StoredWebhook) Secrets(now time.Time) []string {
	out := []string{w.Secret}
	if w.PreviousSecret != "" {
		if until, err := time.Parse(time.RFC3339Nano, w.PreviousUntil); err == nil && now.Before(until) {
			out = append(out, w.PreviousSecret)
		}
	}
	return out
}

// Subscribes reports whether the webhook wants events of type typ.
func (w StoredWebhook) Subscribes(typ string) bool { return contains(w.Events, typ) }

// GeneratedSecret is a webhook secret an apply generated: shown once in the report.
type GeneratedSecret struct {
	Project string `json:"project"`
	Webhook string `json:"webhook"`
	Secret  string `json:"secret"`
}

// FormNotify is a form's `notify: {to: [...], template?}`: one email per address for each
// accepted submission.
type FormNotify struct {
	To       []string `json:"to"`
	Template string   `json:"template,omitempty"`
}

// FormAutoReply is a form's `autoReply: {emailField, template}`: one email to the address the
// submitter typed in emailField.
type FormAutoReply struct {
	EmailField string `json:"emailField"`
	Template   string `json:"template"`
}

// NewWebhookSecret returns a fresh whsec_ secret (32 random bytes).
func NewWebhookSecret() (string, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return "whsec_" + base64.StdEncoding.EncodeToString(b[:]), nil
}

// checkWebhookSecret reports what is wrong with a given secret ("" when fine).
func checkWebhookSecret(s string) string {
	raw, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(s, "whsec_"))
	if !strings.HasPrefix(s, "whsec_") || err != nil || len(raw) < 24 || len(raw) > 64 {
		return "must be whsec_ followed by the base64 of 24 to 64 bytes (omit it to have one generated)"
	}
	return ""
}

// webhooks checks a project's webhooks.
func (c *checker) webhooks(pp string, hooks []Webhook) {
	seen := map[string]string{}
	for i, w := range hooks {
		wp := fmt.Sprintf("%s.webhooks[%d]", pp, i)
		if !nameRe.MatchString(w.Name) {
			c.add(wp+".name", "must be 1-63 letters, digits, - or _")
		} else {
			c.unique(seen, w.Name, wp, "webhook")
		}
		u, err := url.Parse(w.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil || u.Fragment != "" {
			c.add(wp+".url", "must be an absolute http(s) URL without credentials or fragment")
		}
		if len(w.Events) == 0 {
			c.add(wp+".events", "list at least one of %s", strings.Join(WebhookEvents, ", "))
		}
		for j, e := range w.Events {
			if !contains(WebhookEvents, e) {
				c.add(fmt.Sprintf("%s.events[%d]", wp, j), "%q is not an event; events are %s", e, strings.Join(WebhookEvents, ", "))
			}
		}
		if w.Secret != "" {
			if msg := checkWebhookSecret(w.Secret); msg != "" {
				c.add(wp+".secret", "%s", msg)
			}
		}
	}
}

// formMail checks a form's notify and autoReply against its fields and the project's templates.
func (c *checker) formMail(fp string, f Form, p Project) {
	templates := map[string]bool{}
	if p.Email != nil {
		for _, t := range p.Email.Templates {
			templates[t.Slug] = true
		}
	}
	if n := f.Notify; n != nil {
		if len(n.To) == 0 || len(n.To) > 10 {
			c.add(fp+".notify.to", "list 1 to 10 addresses")
		}
		for i, a := range n.To {
			c.address(fmt.Sprintf("%s.notify.to[%d]", fp, i), &Address{Email: a})
		}
		if n.Template != "" && !templates[n.Template] {
			c.add(fp+".notify.template", "no template %q in this project's email.templates", n.Template)
		}
	}
	if r := f.AutoReply; r != nil {
		ok := false
		for _, fd := range f.Fields {
			ok = ok || (fd.Name == r.EmailField && fd.Type == "email")
		}
		if !ok {
			c.add(fp+".autoReply.emailField", "must name a field of type email of this form")
		}
		if !templates[r.Template] {
			c.add(fp+".autoReply.template", "no template %q in this project's email.templates", r.Template)
		}
	}
}

// webhooks stores a project's webhooks, keeping or generating secrets and starting a rotation
// when the document replaces one.
func (a *applier) webhooks(project string, hooks []Webhook) error {
	for _, w := range hooks {
		k := key(kWebhook, project, w.Name)
		var prev StoredWebhook
		raw, err := a.txn.Get(k)
		switch {
		case errors.Is(err, store.ErrNotFound):
		case err != nil:
			return err
		default:
			if err := json.Unmarshal(raw, &prev); err != nil {
				return fmt.Errorf("tenancy: stored webhook %s/%s: %w", project, w.Name, err)
			}
		}
		sw := StoredWebhook{Webhook: w, PreviousSecret: prev.PreviousSecret, PreviousUntil: prev.PreviousUntil}
		switch {
		case w.Secret == "" && prev.Secret != "":
			sw.Secret = prev.Secret
		case w.Secret == "":
			if sw.Secret, err = NewWebhookSecret(); err != nil {
				return err
			}
			a.report.GeneratedSecrets = append(a.report.GeneratedSecrets, GeneratedSecret{Project: project, Webhook: w.Name, Secret: sw.Secret})
		case prev.Secret != "" && w.Secret != prev.Secret:
			sw.PreviousSecret = prev.Secret
			sw.PreviousUntil = a.nowTime.Add(SecretRotationGrace).UTC().Format(time.RFC3339Nano)
		}
		if err := a.put(k, "webhook", project+"/"+w.Name, sw); err != nil {
			return err
		}
	}
	return nil
}

// Webhooks returns a project's webhooks, with their secrets (for the delivery worker).
func (s *Service) Webhooks(ctx context.Context, project string) ([]StoredWebhook, error) {
	return listJSON[StoredWebhook](ctx, s, prefix(kWebhook, project))
}

// Webhook returns one webhook of a project, or ErrNotFound.
func (s *Service) Webhook(ctx context.Context, project, name string) (StoredWebhook, error) {
	var w StoredWebhook
	return w, s.getJSON(ctx, key(kWebhook, project, name), &w)
}
