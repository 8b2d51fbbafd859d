package email_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/edge/apierr"
	"github.com/gatehouse-dev/gatehouse/edge/edgetest/storetest"
	"github.com/gatehouse-dev/gatehouse/edge/store"
	"github.com/gatehouse-dev/gatehouse/edge/tenancy"
	"github.com/gatehouse-dev/gatehouse/products/email"
)

// clock is a settable test clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// newService opens a store with the test tenants and returns a service over it (no worker).
func newService(t *testing.T, o email.Options) *email.Service {
	svc, _ := newServiceTenancy(t, o)
	return svc
}

func newServiceTenancy(t *testing.T, o email.Options) (*email.Service, *tenancy.Service) {
	t.Helper()
	svc, ten, _ := newServiceDB(t, o)
	return svc, ten
}

// newServiceDB is newServiceTenancy that also returns the store.
func newServiceDB(t *testing.T, o email.Options) (*email.Service, *tenancy.Service, *store.DB) {
	t.Helper()
	db, err := storetest.Open(t, store.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	ten, err := tenancy.NewService(tenancy.Options{DB: db})
	if err != nil {
		t.Fatal(err)
	}
	o.DB, o.Tenancy = db, ten
	svc, err := email.NewService(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = svc.Close(); _ = db.Close() })
	if err := ten.Add(svc); err != nil {
		t.Fatal(err)
	}
	doc, err := tenancy.Parse([]byte(tenants))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ten.Apply(context.Background(), doc); err != nil {
		t.Fatal(err)
	}
	return svc, ten, db
}

var demo = email.Caller{Org: "acme", Project: "demo"}

func inlineReq(to string) email.SendRequest {
	s, b := "Subject", "<p>Body</p>"
	return email.SendRequest{To: &email.Address{Email: to}, Subject: &s, BodyHTML: &b}
}

func TestIdempotencyWindow(t *testing.T) {
	t.Parallel()
	c := &clock{t: time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)}
	svc := newService(t, email.Options{Now: c.Now})
	ctx := context.Background()
	first, err := svc.Send(ctx, demo, "k1", inlineReq("a@example.com"))
	if err != nil {
		t.Fatal(err)
	}
	c.Add(23 * time.Hour)
	again, _ := svc.Send(ctx, demo, "k1", inlineReq("a@example.com"))
	if again.ID != first.ID {
		t.Errorf("Send after 23 h = %s, want the first message %s", again.ID, first.ID)
	}
	other, _ := svc.Send(ctx, email.Caller{Org: "acme", Project: "other"}, "k1", inlineReq("a@example.com"))
	if other.ID == first.ID {
		t.Error("the same key in another project returned the first project's message")
	}
	c.Add(2 * time.Hour)
	later, _ := svc.Send(ctx, demo, "k1", inlineReq("a@example.com"))
	if later.ID == first.ID {
		t.Errorf("Send after 25 h returned the first message %s, want a new one", first.ID)
	}
	m, err := svc.Get(ctx, first.ID)
	if err != nil || m.IdempotencyKey != "k1" || m.Text != "Body" {
		t.Errorf("Get(first) = %+v, %v; want key k1 and the derived text part", m, err)
	}
}

// hook rewrites subjects, refuses one address and rewrites the variables of another.
type hook struct{}

func (hook) FilterSend(_ context.Context, project string, d *email.Draft) error {
	m := d.Message
	switch m.To.Email {
	case "refused@example.com":
		return errors.New("blocked by policy")
	case "coded@example.com":
		return apierr.New(403, "POLICY", "no", nil)
	case "retag@example.com":
		m.Tags = []string{"plugin"}
		return nil
	case "vars@example.com":
		if d.Variables["name"] != "Ada" {
			return fmt.Errorf("hook saw variables %v, want name=Ada", d.Variables)
		}
		d.Variables["name"] = "Grace"
		return nil
	}
	m.Subject = "[" + project + "] " + m.Subject
	return nil
}

var _ email.SendHook = hook{}

func TestSendHookAndClose(t *testing.T) {
	t.Parallel()
	svc := newService(t, email.Options{Plugins: hook{}})
	ctx := context.Background()
	rc, err := svc.Send(ctx, demo, "", inlineReq("a@example.com"))
	if err != nil {
		t.Fatal(err)
	}
	if m, _ := svc.Get(ctx, rc.ID); m.Subject != "[demo] Subject" {
		t.Errorf("hooked subject = %q", m.Subject)
	}
	// Rewritten variables render the template again.
	rc, err = svc.Send(ctx, demo, "", email.SendRequest{To: &email.Address{Email: "vars@example.com"}, TemplateID: "plain",
		Variables: map[string]any{"name": "Ada"}})
	if err != nil {
		t.Fatal(err)
	}
	if m, _ := svc.Get(ctx, rc.ID); m.Subject != "Plain Grace" || m.Text != "Hello Grace" {
		t.Errorf("after a variables rewrite: subject %q, text %q; want Grace", m.Subject, m.Text)
	}
	if _, err := svc.Send(ctx, demo, "", inlineReq("refused@example.com")); !errors.Is(err, email.ErrRejected) {
		t.Errorf("refused send = %v, want ErrRejected (422 SEND_REJECTED)", err)
	}
	if _, err := svc.Send(ctx, demo, "", inlineReq("coded@example.com")); apierr.As(err).Code != "POLICY" {
		t.Errorf("hook API error = %v, want its own code", err)
	}
	if err := svc.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Send(ctx, demo, "", inlineReq("a@example.com")); !errors.Is(err, email.ErrClosed) {
		t.Errorf("Send after Close = %v, want ErrClosed (503 UNAVAILABLE)", err)
	}
}

// Prepare (form notifications and auto-replies, queued in the submission's transaction) runs
// the same SendHook as Send: the hook rewrites the message and its template variables, or
// refuses it before anything is queued.
func TestPrepareRunsTheSendHook(t *testing.T) {
	t.Parallel()
	svc, _, db := newServiceDB(t, email.Options{Plugins: hook{}})
	ctx := context.Background()
	p, err := svc.Prepare(ctx, "demo", inlineReq("a@example.com"))
	if err != nil {
		t.Fatal(err)
	}
	queue(t, db, p)
	if m, _ := svc.Get(ctx, p.ID()); m.Subject != "[demo] Subject" {
		t.Errorf("prepared message subject = %q, want the hook's rewrite", m.Subject)
	}
	p, err = svc.Prepare(ctx, "demo", email.SendRequest{To: &email.Address{Email: "vars@example.com"}, TemplateID: "plain",
		Variables: map[string]any{"name": "Ada"}})
	if err != nil {
		t.Fatal(err)
	}
	queue(t, db, p)
	if m, _ := svc.Get(ctx, p.ID()); m.Subject != "Plain Grace" || m.Text != "Hello Grace" {
		t.Errorf("prepared message after a variables rewrite: subject %q, text %q; want Grace", m.Subject, m.Text)
	}
	// A plugin's rewrite of the tags keeps the gateway's own (form-notification).
	req := inlineReq("retag@example.com")
	req.Tags = []string{"form-notification"}
	if p, err = svc.Prepare(ctx, "demo", req); err != nil {
		t.Fatal(err)
	}
	queue(t, db, p)
	if m, _ := svc.Get(ctx, p.ID()); !slices.Equal(m.Tags, []string{"plugin", "form-notification"}) {
		t.Errorf("prepared message tags after a plugin's rewrite = %v, want [plugin form-notification]", m.Tags)
	}
	if _, err := svc.Prepare(ctx, "demo", inlineReq("refused@example.com")); !errors.Is(err, email.ErrRejected) {
		t.Errorf("Prepare of a refused message = %v, want ErrRejected", err)
	}
	if _, err := svc.Prepare(ctx, "demo", inlineReq("coded@example.com")); apierr.As(err).Code != "POLICY" {
		t.Errorf("Prepare refused with an API error = %v, want its own code", err)
	}
}

// queue writes a prepared message in a transaction of its own.
func queue(t *testing.T, db *store.DB, p *email.Prepared) {
	t.Helper()
	if err := db.Update(context.Background(), p.Queue); err != nil {
		t.Fatalf("Queue: %v", err)
	}
}

func TestTemplateCacheInvalidation(t *testing.T) {
	t.Parallel()
	svc, ten := newServiceTenancy(t, email.Options{})
	ctx := context.Background()
	req := email.SendRequest{To: &email.Address{Email: "a@example.com"}, TemplateID: "later"}
	if _, err := svc.Send(ctx, demo, "", req); !errors.Is(err, email.ErrTemplateNotFound) {
		t.Fatalf("unknown template = %v, want ErrTemplateNotFound", err)
	}
	doc, err := tenancy.Parse([]byte(`{"orgs":[{"slug":"acme","projects":[{"id":"demo","email":{"templates":[{"slug":"later","subject":"Later","body":"text"}]}}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ten.Apply(ctx, doc); err != nil {
		t.Fatal(err)
	}
	rc, err := svc.Send(ctx, demo, "", req)
	if err != nil {
		t.Fatalf("send after the template was added = %v (stale cache?)", err)
	}
	if m, _ := svc.Get(ctx, rc.ID); m.Subject != "Later" || m.Text != "text" || m.HTML != "" {
		t.Errorf("plain-text template message = %+v", m)
	}
}
