package email

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/mail"
	"strings"

	"github.com/gatehouse-dev/gatehouse/edge/store"
	"github.com/gatehouse-dev/gatehouse/edge/tenancy"
)

// Address is an email address with an optional display name.
type Address struct {
	Email string `json:"email"`
	Name  string `json:"name,omitempty"`
}

// Template is an email template; subject and body hold {{placeholder}} tokens.
type Template struct {
	Slug    string `json:"slug"`
	Subject string `json:"subject"`
	Body    string `json:"body"`
	// Text is an optional plain-text body; derived from Body when empty.
	Text string `json:"text,omitempty"`
}

// Sender is a project's sender defaults.
type Sender struct {
	From    *Address `json:"from,omitempty"`
	ReplyTo *Address `json:"replyTo,omitempty"`
}

// settings is the email key of a project in the tenants document.
type settings struct {
	From      *Address   `json:"from,omitempty"`
	ReplyTo   *Address   `json:"replyTo,omitempty"`
	Templates []Template `json:"templates,omitempty"`
}

// Suppression is one address on an org's suppression list.
type Suppression struct {
	Email  string `json:"email"`
	Source string `json:"source"` // tenants | bounce | complaint | admin
	Reason string `json:"reason,omitempty"`
	At     string `json:"at"`
}

// Key layout of the sections: email/sender/<project> -> Sender; email/tmpl/<project>/<slug> ->
// Template; email/suppress/<org>/<lower-case address> -> Suppression.
func senderKey(project string) []byte         { return store.Key(root, "sender", project) }
func templateKey(project, slug string) []byte { return store.Key(root, "tmpl", project, slug) }
func suppressKey(org, addr string) []byte     { return store.Key(root, "suppress", org, addr) }
func suppressPrefix(org string) []byte        { return store.Prefix(root, "suppress", org) }

var (
	senderRoot   = store.Prefix(root, "sender")
	templateRoot = store.Prefix(root, "tmpl")
	suppressRoot = store.Prefix(root, "suppress")
)

// Sections implements tenancy.Owner: the email key of projects (sender defaults and templates)
// and the suppressions key of orgs.
func (s *Service) Sections() []tenancy.Section {
	return []tenancy.Section{suppressionsSection{}, emailSection{}}
}

var (
	_ tenancy.Owner   = (*Service)(nil)
	_ tenancy.Section = emailSection{}
	_ tenancy.Section = suppressionsSection{}
)

// validAddress reports a bare address of at most maxAddressLen bytes (suppressions are kept
// under keys holding the address: store.MaxKeyLen bounds them).
func validAddress(a string) bool {
	if len(a) > maxAddressLen {
		return false
	}
	_, err := mail.ParseAddress(a)
	return err == nil && !strings.ContainsAny(a, "<> ")
}

// emailSection is the email key of a project: sender defaults (replaced whole by each apply, so
// leaving them out removes them) and templates (upserted by slug).
type emailSection struct{}

func (emailSection) Name() string         { return "email" }
func (emailSection) Level() tenancy.Level { return tenancy.ProjectLevel }

func (emailSection) Check(c *tenancy.Check, raw json.RawMessage) {
	var e settings
	if !c.Decode(raw, &e) {
		return
	}
	for sub, a := range map[string]*Address{".from": e.From, ".replyTo": e.ReplyTo} {
		if a != nil && !validAddress(a.Email) {
			c.Add(sub+".email", "%q is not an email address", a.Email)
		}
	}
	seen := map[string]string{}
	for i, t := range e.Templates {
		tp := fmt.Sprintf(".templates[%d]", i)
		if !tenancy.IsSlug(t.Slug) {
			c.Add(tp+".slug", "must be 1-63 lower-case letters, digits, - or _")
		} else {
			c.Unique(seen, t.Slug, tp, "template")
		}
		if t.Subject == "" || t.Body == "" {
			c.Add(tp, "subject and body are both required")
		}
	}
}

func (emailSection) Apply(w *tenancy.Writer, raw json.RawMessage) error {
	var e settings
	if err := tenancy.Decode(raw, &e); err != nil {
		return err
	}
	if e.From == nil && e.ReplyTo == nil {
		if err := w.Delete(senderKey(w.Project), "sender", ""); err != nil {
			return err
		}
	} else if err := w.Put(senderKey(w.Project), "sender", "", Sender{From: e.From, ReplyTo: e.ReplyTo}); err != nil {
		return err
	}
	for _, t := range e.Templates {
		if err := w.Put(templateKey(w.Project, t.Slug), "template", t.Slug, t); err != nil {
			return err
		}
	}
	return nil
}

func (emailSection) Prune(w *tenancy.Writer) error {
	if err := w.Prune(senderRoot, "sender", tenancy.ProjectLevel, nil, nil); err != nil {
		return err
	}
	return w.Prune(templateRoot, "template", tenancy.ProjectLevel, nil, nil)
}

// suppressionsSection is the suppressions key of an org: addresses never sent to. Entries the
// document added are pruned with it; those from bounces, complaints or the admin API stay.
type suppressionsSection struct{}

func (suppressionsSection) Name() string         { return "suppressions" }
func (suppressionsSection) Level() tenancy.Level { return tenancy.OrgLevel }

func (suppressionsSection) Check(c *tenancy.Check, raw json.RawMessage) {
	var list []string
	if !c.Decode(raw, &list) {
		return
	}
	for i, a := range list {
		if !validAddress(a) {
			c.Add(fmt.Sprintf("[%d]", i), "%q is not an email address", a)
		}
	}
}

func (suppressionsSection) Apply(w *tenancy.Writer, raw json.RawMessage) error {
	var list []string
	if err := tenancy.Decode(raw, &list); err != nil {
		return err
	}
	for _, addr := range list {
		lower := strings.ToLower(strings.TrimSpace(addr))
		k := suppressKey(w.Org, lower)
		w.Touch(k)
		ok, err := w.Txn.Has(k)
		if err != nil {
			return err
		}
		if ok {
			w.Unchanged()
			continue
		}
		if err := w.Put(k, "suppression", lower, Suppression{Email: lower, Source: "tenants", At: w.Now}); err != nil {
			return err
		}
	}
	return nil
}

func (suppressionsSection) Prune(w *tenancy.Writer) error {
	notFromDocument := func(v []byte) bool {
		var s Suppression
		return json.Unmarshal(v, &s) == nil && s.Source != "tenants"
	}
	return w.Prune(suppressRoot, "suppression", tenancy.OrgLevel, notFromDocument, nil)
}

// errNoValue reports a missing sender or template.
var errNoValue = errors.New("email: not found")

// getJSON reads and decodes the value at k, or errNoValue.
func (s *Service) getJSON(ctx context.Context, k []byte, v any) error {
	return s.db.View(ctx, func(txn *store.Txn) error {
		raw, err := txn.Get(k)
		if errors.Is(err, store.ErrNotFound) {
			return errNoValue
		}
		if err != nil {
			return err
		}
		return json.Unmarshal(raw, v)
	})
}

// IsSuppressed reports whether addr is on org's suppression list (case-insensitive).
func (s *Service) IsSuppressed(ctx context.Context, org, addr string) (bool, error) {
	var ok bool
	err := s.db.View(ctx, func(txn *store.Txn) error {
		var err error
		ok, err = txn.Has(suppressKey(org, strings.ToLower(strings.TrimSpace(addr))))
		return err
	})
	return ok, err
}

// Suppress adds addr to org's suppression list (source bounce, complaint or admin).
func (s *Service) Suppress(ctx context.Context, org, addr, source, reason string) error {
	return s.db.Update(ctx, func(txn *store.Txn) error { return s.suppress(txn, org, addr, source, reason) })
}

// suppress adds addr to org's suppression list inside txn (a bounce writes it in the same
// transaction as the message's status, so a bounced message always has its suppression).
func (s *Service) suppress(txn *store.Txn, org, addr, source, reason string) error {
	lower := strings.ToLower(strings.TrimSpace(addr))
	v, _ := json.Marshal(Suppression{Email: lower, Source: source, Reason: reason, At: s.stamp()})
	return txn.Set(suppressKey(org, lower), v)
}

// Unsuppress removes addr from org's suppression list.
func (s *Service) Unsuppress(ctx context.Context, org, addr string) error {
	lower := strings.ToLower(strings.TrimSpace(addr))
	return s.db.Update(ctx, func(txn *store.Txn) error { return txn.Delete(suppressKey(org, lower)) })
}

// Suppressions lists org's suppression list in address order.
func (s *Service) Suppressions(ctx context.Context, org string) ([]Suppression, error) {
	var out []Suppression
	err := s.db.View(ctx, func(txn *store.Txn) error {
		return txn.Iterate(store.IterOptions{Prefix: suppressPrefix(org)}, func(_, v []byte) (bool, error) {
			var x Suppression
			if err := json.Unmarshal(v, &x); err != nil {
				return false, err
			}
			out = append(out, x)
			return true, nil
		})
	})
	return out, err
}
