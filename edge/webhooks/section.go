package webhooks

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/gatehouse-dev/gatehouse/edge/apitime"
	"github.com/gatehouse-dev/gatehouse/edge/egress"
	"github.com/gatehouse-dev/gatehouse/edge/journal"
	"github.com/gatehouse-dev/gatehouse/edge/store"
	"github.com/gatehouse-dev/gatehouse/edge/tenancy"
)

// Events are the event types a webhook may subscribe to (decisions.md 8.3).
var Events = []string{
	"form.submitted", "email.sent", "email.delivered", "email.bounced", "email.spam",
	"email.suppressed", "email.failed", "asset.completed",
}

// SecretRotationGrace is how long a replaced secret keeps signing beside the new one.
const SecretRotationGrace = 24 * time.Hour

// Webhook is one entry of a project's `webhooks:` in the tenants document.
type Webhook struct {
	Name   string   `json:"name"`
	URL    string   `json:"url"`
	Events []string `json:"events"`
	// Secret is whsec_<base64 of 24-64 bytes>; generated (and reported once) when omitted.
	Secret string `json:"secret,omitempty"`
}

// StoredWebhook is a webhook as stored: with its secret, and the secret it replaced while that
// one still signs (until PreviousUntil).
type StoredWebhook struct {
	Webhook
	PreviousSecret string    `json:"previousSecret,omitempty"`
	PreviousUntil  time.Time `json:"previousUntil,omitzero"`
}

// Secrets returns the secrets that sign a delivery at now: the current one, then the replaced
// one during its grace period.
func (w StoredWebhook) Secrets(now time.Time) []string {
	out := []string{w.Secret}
	if w.PreviousSecret != "" && now.Before(w.PreviousUntil) {
		out = append(out, w.PreviousSecret)
	}
	return out
}

// Subscribes reports whether the webhook wants events of type typ.
func (w StoredWebhook) Subscribes(typ string) bool { return slices.Contains(w.Events, typ) }

// hookKey: webhooks/hook/<project>/<name> -> StoredWebhook.
func hookKey(project, name string) []byte { return store.Key(root, "hook", project, name) }

var hookRoot = store.Prefix(root, "hook")

// NewSecret returns a fresh whsec_ secret (32 random bytes).
func NewSecret() (string, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return "whsec_" + base64.StdEncoding.EncodeToString(b[:]), nil
}

// checkSecret reports what is wrong with a given secret ("" when fine).
func checkSecret(s string) string {
	raw, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(s, "whsec_"))
	if !strings.HasPrefix(s, "whsec_") || err != nil || len(raw) < 24 || len(raw) > 64 {
		return "must be whsec_ followed by the base64 of 24 to 64 bytes (omit it to have one generated)"
	}
	return ""
}

// Sections implements tenancy.Owner: a project's webhooks.
func (s *Service) Sections() []tenancy.Section { return []tenancy.Section{section{s.egress}} }

// Changed implements tenancy.Owner: a change of a project's webhooks drops its cached list.
func (s *Service) Changed(ctx context.Context, changes []journal.Change) {
	s.hooks.Changed(ctx, changes)
}

var (
	_ tenancy.Owner   = (*Service)(nil)
	_ tenancy.Section = section{}
)

// section is the webhooks key of a project. Its check refuses an endpoint the egress policy
// refuses (a private or loopback address, or a name resolving to one, unless
// egress.allow_private_networks); deliveries check again when they connect.
type section struct{ egress *egress.Policy }

func (section) Name() string         { return "webhooks" }
func (section) Level() tenancy.Level { return tenancy.ProjectLevel }

func (sec section) Check(c *tenancy.Check, raw json.RawMessage) {
	var hooks []Webhook
	if !c.Decode(raw, &hooks) {
		return
	}
	seen := map[string]string{}
	for i, w := range hooks {
		wp := fmt.Sprintf("[%d]", i)
		if !tenancy.IsName(w.Name) {
			c.Add(wp+".name", "must be 1-63 letters, digits, - or _")
		} else {
			c.Unique(seen, w.Name, wp, "webhook")
		}
		for _, p := range checkHook(context.Background(), sec.egress, w) {
			c.Add(wp+"."+p.Path, "%s", p.Message)
		}
	}
}

// checkHook reports what is wrong with one webhook's URL, events and secret (paths relative to
// the webhook): the document's check and the admin API's PUT share it.
func checkHook(ctx context.Context, eg *egress.Policy, w Webhook) []tenancy.Problem {
	var out []tenancy.Problem
	add := func(path, format string, args ...any) {
		out = append(out, tenancy.Problem{Path: path, Message: fmt.Sprintf(format, args...)})
	}
	u, err := url.Parse(w.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil || u.Fragment != "" {
		add("url", "must be an absolute http(s) URL without credentials or fragment")
	} else if err := eg.CheckTarget(ctx, u); err != nil {
		add("url", "refused by the egress policy (%v); set egress.allow_private_networks to deliver to private networks", err)
	}
	if len(w.Events) == 0 {
		add("events", "list at least one of %s", strings.Join(Events, ", "))
	}
	for j, e := range w.Events {
		if !slices.Contains(Events, e) {
			add(fmt.Sprintf("events[%d]", j), "%q is not an event; events are %s", e, strings.Join(Events, ", "))
		}
	}
	if w.Secret != "" {
		if msg := checkSecret(w.Secret); msg != "" {
			add("secret", "%s", msg)
		}
	}
	return out
}

// Apply upserts the webhooks by name: a missing secret keeps the stored one or is generated
// (and shown once); a new secret starts a rotation, the old one signing too for 24 hours.
func (section) Apply(w *tenancy.Writer, raw json.RawMessage) error {
	var hooks []Webhook
	if err := tenancy.Decode(raw, &hooks); err != nil {
		return err
	}
	now, err := time.Parse(apitime.Layout, w.Now)
	if err != nil {
		return fmt.Errorf("webhooks: apply time: %w", err)
	}
	for _, h := range hooks {
		k := hookKey(w.Project, h.Name)
		var prev StoredWebhook
		old, err := w.Txn.Get(k)
		switch {
		case errors.Is(err, store.ErrNotFound):
		case err != nil:
			return err
		default:
			if err := json.Unmarshal(old, &prev); err != nil {
				return fmt.Errorf("webhooks: stored webhook %s/%s: %w", w.Project, h.Name, err)
			}
		}
		sw, generated, err := nextStored(prev, h, now)
		if err != nil {
			return err
		}
		if generated {
			w.ShowOnce("webhook", h.Name, sw.Secret)
		}
		if err := w.Put(k, "webhook", h.Name, sw); err != nil {
			return err
		}
	}
	return nil
}

// nextStored is what stores h over prev (the zero value when new): a missing secret keeps the
// stored one or is generated (generated is then true: shown once); a new secret starts a
// rotation, the old one signing too for SecretRotationGrace.
func nextStored(prev StoredWebhook, h Webhook, now time.Time) (sw StoredWebhook, generated bool, err error) {
	sw = StoredWebhook{Webhook: h, PreviousSecret: prev.PreviousSecret, PreviousUntil: prev.PreviousUntil}
	switch {
	case h.Secret == "" && prev.Secret != "":
		sw.Secret = prev.Secret
	case h.Secret == "":
		if sw.Secret, err = NewSecret(); err != nil {
			return sw, false, err
		}
		generated = true
	case prev.Secret != "" && h.Secret != prev.Secret:
		sw.PreviousSecret, sw.PreviousUntil = prev.Secret, now.Add(SecretRotationGrace).UTC()
	}
	return sw, generated, nil
}

func (section) Prune(w *tenancy.Writer) error {
	return w.Prune(hookRoot, "webhook", tenancy.ProjectLevel, nil, nil)
}

// readHooks returns a project's webhooks, in name order.
func (s *Service) readHooks(ctx context.Context, project string) ([]StoredWebhook, error) {
	var out []StoredWebhook
	err := s.db.View(ctx, func(txn *store.Txn) error {
		return txn.Iterate(store.IterOptions{Prefix: store.Prefix(root, "hook", project)}, func(k, v []byte) (bool, error) {
			var h StoredWebhook
			if err := json.Unmarshal(v, &h); err != nil {
				return false, fmt.Errorf("webhooks: decode %s: %w", k, err)
			}
			out = append(out, h)
			return true, nil
		})
	})
	return out, err
}

// hook returns one webhook of a project, or ErrNotFound.
func (s *Service) hook(ctx context.Context, project, name string) (StoredWebhook, error) {
	var h StoredWebhook
	err := s.db.View(ctx, func(txn *store.Txn) error {
		raw, err := txn.Get(hookKey(project, name))
		if errors.Is(err, store.ErrNotFound) {
			return ErrNotFound
		}
		if err != nil {
			return err
		}
		return json.Unmarshal(raw, &h)
	})
	return h, err
}
