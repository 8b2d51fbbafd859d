package forms_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/gatehouse-dev/gatehouse/edge/apierr"
	"github.com/gatehouse-dev/gatehouse/edge/store"
	"github.com/gatehouse-dev/gatehouse/edge/tenancy"
	"github.com/gatehouse-dev/gatehouse/products/forms"
)

func TestNotifyAndAutoReplyValidation(t *testing.T) {
	t.Parallel()
	const head = `
orgs:
  - slug: acme
    projects:
      - id: demo
        forms:
          - slug: contact
            published: true
            fields:
              - {name: name, type: text}
              - {name: email, type: email}
`
	fs, db := newService(t, pluginTenants, nil)
	ten, err := tenancy.NewService(tenancy.Options{DB: db})
	if err != nil {
		t.Fatal(err)
	}
	join(t, ten, fs)
	for _, tc := range []struct{ name, extra, path string }{
		{"not an address", "            notify: {to: [\"not an address\"]}\n", "forms[0].notify.to[0]"},
		{"display-name form", "            notify: {to: [\"Ann <ann@example.com>\"]}\n", "forms[0].notify.to[0]"},
		{"no address", "            notify: {to: []}\n", "forms[0].notify.to"},
		{"unknown template", "            notify: {to: [ann@example.com], template: nope}\n", "forms[0].notify.template"},
		{"emailField not of type email", "            autoReply: {emailField: name, template: thanks}\n", "forms[0].autoReply.emailField"},
		{"autoReply template unknown", "            autoReply: {emailField: email, template: thanks}\n", "forms[0].autoReply.template"},
		{"unknown key", "            notify: {to: [ann@example.com], cc: [bob@example.com]}\n", "forms[0].notify.cc"},
	} {
		d, err := tenancy.Parse([]byte(head + tc.extra))
		if err == nil {
			err = ten.Validate(d)
		}
		if err == nil || !strings.Contains(err.Error(), tc.path) {
			t.Errorf("%s: Validate = %v, want a problem at %s", tc.name, err, tc.path)
		}
	}
}

// recorder is a forms.Webhooks and forms.Mailer that keeps what it was told.
type recorder struct {
	mu     sync.Mutex
	events []map[string]any
	mails  []forms.Mail
	fail   error
	// refuse makes PrepareMail refuse the mails to this address as the email product would.
	refuse string
	// wrote counts the write functions the store ran.
	wrote int
}

func (r *recorder) write(id string) func(*store.Txn) error {
	return func(txn *store.Txn) error {
		r.mu.Lock()
		r.wrote++
		n := r.wrote
		r.mu.Unlock()
		return txn.Set(store.Key("test", "event", id, fmt.Sprint(n)), []byte("x"))
	}
}

func (r *recorder) PrepareEvent(_ context.Context, project, typ string, data any) (func(*store.Txn) error, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.fail != nil {
		return nil, r.fail
	}
	d := data.(map[string]any)
	d["type"] = typ
	r.events = append(r.events, d)
	return r.write(d["id"].(string)), nil
}

func (r *recorder) PrepareMail(_ context.Context, project string, m forms.Mail) (func(*store.Txn) error, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if m.To == r.refuse {
		return nil, apierr.New(422, "VALIDATION_FAILED", "refused", nil)
	}
	r.mails = append(r.mails, m)
	return r.write(m.Metadata["submission"]), nil
}

func TestEventsOnlyForAcceptedSubmissions(t *testing.T) {
	t.Parallel()
	const doc = `
orgs:
  - slug: acme
    projects:
      - id: demo
        forms:
          - slug: contact
            title: Contact us
            published: true
            fields:
              - {name: name, type: text, label: Your name, required: true}
              - {name: email, type: email}
              - {name: topics, type: multiselect, options: [a, b]}
            notify: {to: [owner@example.com, refused@example.com]}
`
	rec := &recorder{refuse: "refused@example.com"}
	svc, db := newService(t, doc, func(o *forms.Options) { o.Webhooks, o.Mailer = rec, rec })
	ctx := context.Background()
	submit := func(values map[string]any) error {
		_, err := svc.Submit(ctx, forms.Input{Project: "demo", Slug: "contact", KeyHash: "k", Values: values})
		return err
	}
	if err := submit(map[string]any{"topics": []any{"a"}}); err == nil {
		t.Fatal("a submission without the required name was accepted")
	}
	if err := submit(map[string]any{"name": "Ada", "email": "ada@example.com", "topics": []any{"a", "b"}}); err != nil {
		t.Fatal(err)
	}
	// One webhook event and one notification: the second address is refused by the email
	// product, which skips it and is no reason to refuse the submission.
	if len(rec.events) != 1 || len(rec.mails) != 1 || rec.wrote != 2 {
		t.Fatalf("events %d, mails %d, writes %d; want 1, 1 and 2 (only the accepted submission, the refused mail skipped)", len(rec.events), len(rec.mails), rec.wrote)
	}
	ev := rec.events[0]
	if ev["type"] != "form.submitted" || ev["form"] != "contact" || ev["project"] != "demo" {
		t.Errorf("webhook event = %v", ev)
	}
	id := ev["id"].(string)
	n := rec.mails[0]
	if n.To != "owner@example.com" || n.Tag != "form-notification" || n.Subject != "New submission: Contact us" ||
		!strings.Contains(n.Text, "Your name: Ada") || !strings.Contains(n.Text, "topics: a, b") || n.Metadata["submission"] != id {
		t.Errorf("notification = %+v", n)
	}
	// The events' writes committed with the submission.
	if err := db.View(ctx, func(txn *store.Txn) error {
		_, err := txn.Get(store.Key("test", "event", id, "2"))
		return err
	}); err != nil {
		t.Errorf("the events' writes are not stored: %v", err)
	}
	// When preparing the events fails, the submission is refused and nothing is stored.
	rec.fail = errors.New("queue unavailable")
	if err := submit(map[string]any{"name": "Bo"}); err == nil {
		t.Fatal("a submission whose events could not be prepared was accepted")
	}
	page, err := svc.Inbox(ctx, "demo", "contact", "", 10)
	if err != nil || len(page.Items) != 1 {
		t.Errorf("inbox holds %d submissions (%v), want 1", len(page.Items), err)
	}
}
