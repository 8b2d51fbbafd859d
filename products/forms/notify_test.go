package forms_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

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

// recorder is a forms.Events that keeps what it was told.
type recorder struct {
	mu   sync.Mutex
	seen []forms.Accepted
	fail error
	// wrote counts the write functions the store ran.
	wrote int
}

func (r *recorder) SubmissionAccepted(_ context.Context, a forms.Accepted) (func(*store.Txn) error, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.fail != nil {
		return nil, r.fail
	}
	r.seen = append(r.seen, a)
	return func(txn *store.Txn) error {
		r.mu.Lock()
		r.wrote++
		r.mu.Unlock()
		return txn.Set(store.Key("test", "event", a.Submission.ID), []byte("x"))
	}, nil
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
              - {name: topics, type: multiselect, options: [a, b]}
            notify: {to: [owner@example.com]}
`
	rec := &recorder{}
	svc, db := newService(t, doc, func(o *forms.Options) { o.Events = rec })
	ctx := context.Background()
	submit := func(values map[string]any) error {
		_, err := svc.Submit(ctx, forms.Input{Project: "demo", Slug: "contact", KeyHash: "k", Values: values})
		return err
	}
	if err := submit(map[string]any{"topics": []any{"a"}}); err == nil {
		t.Fatal("a submission without the required name was accepted")
	}
	if err := submit(map[string]any{"name": "Ada", "topics": []any{"a", "b"}}); err != nil {
		t.Fatal(err)
	}
	if len(rec.seen) != 1 || rec.wrote != 1 {
		t.Fatalf("events told %d times, wrote %d times; want 1 and 1 (only the accepted submission)", len(rec.seen), rec.wrote)
	}
	a := rec.seen[0]
	subject, text := a.Summary()
	if subject != "New submission: Contact us" || !strings.Contains(text, "Your name: Ada") || !strings.Contains(text, "topics: a, b") {
		t.Errorf("Summary() = %q, %q", subject, text)
	}
	if v := a.Variables(); v["name"] != "Ada" || v["formSlug"] != "contact" || v["submissionId"] != a.Submission.ID {
		t.Errorf("Variables() = %v", v)
	}
	if a.Form.Notify == nil || a.Form.Notify.To[0] != "owner@example.com" {
		t.Errorf("Accepted.Form.Notify = %+v", a.Form.Notify)
	}
	// The event's write committed with the submission.
	if err := db.View(ctx, func(txn *store.Txn) error {
		_, err := txn.Get(store.Key("test", "event", a.Submission.ID))
		return err
	}); err != nil {
		t.Errorf("the event's write is not stored: %v", err)
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
