package email_test

import (
	"context"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/edge"
	"github.com/gatehouse-dev/gatehouse/edge/cursor"
	"github.com/gatehouse-dev/gatehouse/edge/edgetest"
	"github.com/gatehouse-dev/gatehouse/edge/store"
	"github.com/gatehouse-dev/gatehouse/products/email"
	"github.com/gatehouse-dev/gatehouse/products/email/smtptest"
)

const tenants = `
orgs:
  - slug: acme
    keys:
      - {name: org-sk, value: sk_live_acme_org_email, products: [email]}
    suppressions: [Blocked@Example.com]
    projects:
      - id: demo
        keys:
          - {name: web, value: pk_live_demo_web, products: [forms, files, records, membership]}
          - {name: server, value: sk_live_demo_server, products: [email, files, records]}
          - {name: files-only, value: sk_live_demo_files, products: [files]}
        email:
          from: {email: hello@acme.test, name: "Acme Ünïcode"}
          replyTo: {email: support@acme.test}
          templates:
            - slug: welcome
              subject: "Welcome, {{name}}"
              body: "<p>Hi {{name}}, welcome to {{ product }}. You have {{count}} credits; vip={{vip}}.</p>"
            - slug: plain
              subject: "Plain {{name}}"
              body: "Hello {{name}}"
      - id: other
        keys:
          - {name: server, value: sk_live_other_server, products: [email]}
  - slug: globex
    projects:
      - id: globex-site
`

// env is one gateway with the email product and a running worker.
type env struct {
	*edgetest.Harness
	svc  *email.Service
	smtp *smtptest.Server
	out  *email.Outbox
}

type envOptions struct {
	rule        smtptest.Rule
	outbox      bool
	maxAttempts int
}

// start runs a gateway whose email worker delivers to a test SMTP server (or the outbox).
func start(t *testing.T, o envOptions) *env {
	t.Helper()
	e := &env{}
	h := edgetest.New(t, edgetest.Options{
		Tenants: tenants,
		Products: func(t testing.TB, d edgetest.Deps) []edge.Product {
			svc, err := email.NewService(email.Options{DB: d.DB, Tenancy: d.Tenancy, Log: d.Log, Registerer: d.Registry})
			if err != nil {
				t.Fatal(err)
			}
			cur, err := cursor.NewCursors([]byte("0123456789abcdef0123456789abcdef"))
			if err != nil {
				t.Fatal(err)
			}
			e.svc = svc
			if err := d.Tenancy.Add(svc); err != nil {
				t.Fatal(err)
			}
			return []edge.Product{email.NewAPI(svc, d.Auth, cur)}
		},
	})
	e.Harness = h
	var tr email.Transport
	if o.outbox {
		e.out = &email.Outbox{Dir: h.Dir + "/outbox"}
		tr = e.out
	} else {
		e.smtp = smtptest.Start(t, o.rule)
		s, err := email.NewSMTP(email.SMTPOptions{Host: e.smtp.Host, Port: e.smtp.Port, TLS: "none", HELO: "gatehouse.test"})
		if err != nil {
			t.Fatal(err)
		}
		tr = s
	}
	w := e.svc.NewWorker(email.WorkerOptions{Transport: tr, Concurrency: 2, MaxAttempts: o.maxAttempts,
		BaseBackoff: 5 * time.Millisecond, MaxBackoff: 20 * time.Millisecond, PollInterval: 20 * time.Millisecond, Log: h.Log,
		Shared: h.DB.Backend() == store.BackendPostgres})
	if err := w.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := w.Stop(ctx); err != nil {
			t.Errorf("Worker.Stop: %v", err)
		}
		_ = e.svc.Close()
	})
	return e
}

// send posts a send with the demo server key and returns the new id (failing unless 202).
func (e *env) send(t *testing.T, body any, headers ...string) string {
	t.Helper()
	r := e.Do("POST", "/email/notifications/send", body, append([]string{"X-API-Key", "sk_live_demo_server"}, headers...)...)
	if r.Status != 202 {
		t.Fatalf("POST /email/notifications/send = %d, want 202; body %s", r.Status, r.Body)
	}
	m := r.JSON(t)
	if m["status"] != "queued" && len(headers) == 0 {
		t.Errorf("send status = %v, want queued", m["status"])
	}
	id, _ := m["id"].(string)
	return id
}

// waitStatus polls the message until it has status want (or fails after 10 s).
func (e *env) waitStatus(t *testing.T, id string, want email.Status) *email.Message {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		m, err := e.svc.Get(context.Background(), id)
		if err != nil {
			t.Fatalf("Get(%s): %v", id, err)
		}
		if m.Status == want {
			return m
		}
		if time.Now().After(deadline) {
			t.Fatalf("message %s status %s, want %s; log %+v", id, m.Status, want, m.Log)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func welcome(to string) map[string]any {
	return map[string]any{
		"to":         map[string]any{"email": to, "name": "Zoë <Tester>"},
		"templateId": "welcome",
		"variables":  map[string]any{"name": "Ada & <b>Co</b>", "product": "Gatehouse", "count": 3.5, "vip": true},
		"tags":       []string{"onboarding", "beta"},
		"metadata":   map[string]string{"userId": "u-42"},
	}
}
