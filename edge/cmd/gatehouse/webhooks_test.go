package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/gatehouse-dev/gatehouse/products/email/smtptest"
)

const hookSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"

// hookEvent is one request the receiver verified.
type hookEvent struct {
	ID, Type string
	Data     map[string]any
}

// hookReceiver is a real HTTP receiver that verifies every request with the Standard Webhooks
// library; the first form.submitted it sees is answered 500, everything else 200.
type hookReceiver struct {
	*httptest.Server
	mu     sync.Mutex
	events []hookEvent
	bad    []string
	failed bool
	seen   chan struct{}
}

func newHookReceiver(t *testing.T) *hookReceiver {
	t.Helper()
	wh, err := standardwebhooks.NewWebhook(hookSecret)
	if err != nil {
		t.Fatal(err)
	}
	r := &hookReceiver{seen: make(chan struct{}, 1)}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		raw, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		defer r.mu.Unlock()
		defer func() {
			select {
			case r.seen <- struct{}{}:
			default:
			}
		}()
		if err := wh.Verify(raw, req.Header); err != nil {
			r.bad = append(r.bad, err.Error())
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		var b struct {
			Type string         `json:"type"`
			Data map[string]any `json:"data"`
		}
		_ = json.Unmarshal(raw, &b)
		r.events = append(r.events, hookEvent{ID: req.Header.Get("webhook-id"), Type: b.Type, Data: b.Data})
		if b.Type == "form.submitted" && !r.failed {
			r.failed = true
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(r.Close)
	return r
}

// waitFor waits until the receiver saw n events of type typ and returns them.
func (r *hookReceiver) waitFor(t *testing.T, typ string, n int) []hookEvent {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		r.mu.Lock()
		var got []hookEvent
		for _, e := range r.events {
			if e.Type == typ {
				got = append(got, e)
			}
		}
		bad := r.bad
		r.mu.Unlock()
		if len(bad) > 0 {
			t.Fatalf("receiver refused signatures: %v", bad)
		}
		if len(got) >= n {
			return got
		}
		select {
		case <-r.seen:
		case <-deadline:
			t.Fatalf("receiver saw %d %s events, want %d", len(got), typ, n)
		}
	}
}

func hooksDoc(url string) string {
	return fmt.Sprintf(`orgs:
  - slug: acme
    projects:
      - id: site
        keys:
          - {name: web, value: pk_live_site_web, products: [forms]}
        email:
          from: {email: forms@acme.test, name: Acme forms}
          templates:
            - slug: thanks
              subject: "Thanks, {{name}}"
              body: "Hi {{name}}, we got your message."
        forms:
          - slug: contact
            title: Contact
            published: true
            fields:
              - {name: name, type: text, required: true}
              - {name: email, type: email, required: true}
              - {name: message, type: textarea}
            notify: {to: [owner@acme.test]}
            autoReply: {emailField: email, template: thanks}
          - slug: guarded
            published: true
            captcha: true
            fields:
              - {name: email, type: email, required: true}
            notify: {to: [owner@acme.test]}
        webhooks:
          - name: main
            url: %q
            events: [form.submitted, email.delivered, email.bounced]
            secret: %s
`, url, hookSecret)
}

// A submission sends one notification and one auto-reply through a real SMTP server and one
// form.submitted webhook, verified with the Standard Webhooks library; the receiver's 500 makes
// the event come twice and the deliveries log shows both attempts; a hard bounce of the
// auto-reply makes email.bounced; a refused submission sends nothing.
func TestWebhooksAndNotifications(t *testing.T) {
	t.Parallel()
	rcv := newHookReceiver(t)
	mail := smtptest.Start(t, func(rcpt string, _ int) smtptest.Reply {
		if rcpt == "bounce@example.com" {
			return smtptest.Reply{Code: 550, Message: "no such mailbox"}
		}
		return smtptest.Reply{}
	})
	p := startHooksGateway(t, mail, hooksDoc(rcv.URL))

	submit := func(slug, body string) (int, string) {
		return do(t, "POST", p.url+"/forms/forms/"+slug+"/submit", "pk_live_site_web", body)
	}
	// Refused (captcha required, none configured): no notification, no event.
	if code, body := submit("guarded", `{"data":{"email":"x@example.com"}}`); code == 201 {
		t.Fatalf("guarded submission accepted: %s", body)
	}
	code, body := submit("contact", `{"data":{"name":"Ada","email":"ada@example.com","message":"Hello there"}}`)
	if code != 201 {
		t.Fatalf("submit: %d %s", code, body)
	}
	var receipt struct{ ID string }
	_ = json.Unmarshal([]byte(body), &receipt)

	subs := rcv.waitFor(t, "form.submitted", 2)
	if subs[0].ID != subs[1].ID || subs[0].Data["id"] != receipt.ID || subs[0].Data["form"] != "contact" {
		t.Fatalf("form.submitted deliveries = %+v, want the submission %s twice under one webhook-id", subs, receipt.ID)
	}
	if d, _ := subs[0].Data["data"].(map[string]any); d["message"] != "Hello there" {
		t.Errorf("form.submitted data = %+v", subs[0].Data)
	}
	delivered := rcv.waitFor(t, "email.delivered", 2)
	tags := map[string]bool{}
	for _, e := range delivered {
		for _, tag := range e.Data["tags"].([]any) {
			tags[tag.(string)] = true
		}
	}
	if !tags["form-notification"] || !tags["form-auto-reply"] {
		t.Errorf("email.delivered events carry tags %v, want form-notification and form-auto-reply", tags)
	}
	var toOwner, toAda int
	for _, m := range mail.Messages() {
		h := m.Header()
		switch m.To[0] {
		case "owner@acme.test":
			toOwner++
			raw := string(m.Data)
			if h.Get("Subject") != "New submission: Contact" || !strings.Contains(raw, "Hello there") || !strings.Contains(h.Get("From"), "forms@acme.test") {
				t.Errorf("notification: subject %q from %q body %q", h.Get("Subject"), h.Get("From"), raw)
			}
		case "ada@example.com":
			toAda++
			if h.Get("Subject") != "Thanks, Ada" {
				t.Errorf("auto-reply subject %q", h.Get("Subject"))
			}
		}
	}
	if toOwner != 1 || toAda != 1 {
		t.Errorf("SMTP got %d notifications and %d auto-replies, want 1 and 1", toOwner, toAda)
	}

	// The deliveries log shows the failed attempt and the one that succeeded (the second is
	// logged just after the receiver answered it: read until it is there).
	var statuses []int
	var raw []byte
	for deadline := time.Now().Add(30 * time.Second); ; {
		var code int
		code, raw = p.admin(t, "GET", "/projects/site/webhooks/main/deliveries", "")
		var log struct {
			Items []struct {
				DeliveryID string `json:"deliveryId"`
				Event      string `json:"event"`
				StatusCode int    `json:"statusCode"`
				LatencyMs  *int64 `json:"latencyMs"`
				Outcome    string `json:"outcome"`
			} `json:"items"`
		}
		if err := json.Unmarshal(raw, &log); code != 200 || err != nil {
			t.Fatalf("deliveries: %d %s", code, raw)
		}
		statuses = statuses[:0]
		for _, a := range log.Items {
			if a.DeliveryID == subs[0].ID {
				if a.LatencyMs == nil {
					t.Errorf("attempt without latencyMs: %s", raw)
				}
				statuses = append(statuses, a.StatusCode)
			}
		}
		if len(statuses) >= 2 || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if fmt.Sprint(statuses) != "[200 500]" {
		t.Errorf("form.submitted attempts, newest first = %v, want [200 500]: %s", statuses, raw)
	}

	// A hard bounce of the auto-reply is an email.bounced event.
	if code, body := submit("contact", `{"data":{"name":"Bo","email":"bounce@example.com"}}`); code != 201 {
		t.Fatalf("second submit: %d %s", code, body)
	}
	bounced := rcv.waitFor(t, "email.bounced", 1)
	if to, _ := bounced[0].Data["to"].(map[string]any); to["email"] != "bounce@example.com" {
		t.Errorf("email.bounced = %+v", bounced[0].Data)
	}
	rcv.waitFor(t, "form.submitted", 3)
	rcv.waitFor(t, "email.delivered", 3) // the second notification to the owner
	notifications := 0
	for _, m := range mail.Messages() {
		if m.To[0] == "owner@acme.test" {
			notifications++
		}
	}
	if notifications != 2 {
		t.Errorf("owner got %d notifications for 2 accepted submissions (and 1 refused), want 2", notifications)
	}

	// The test route sends a signed ping; an unknown webhook is 404.
	code, raw = p.admin(t, "POST", "/projects/site/webhooks/main/test", "")
	if code != 200 || !strings.Contains(string(raw), `"ok":true`) {
		t.Fatalf("test ping: %d %s", code, raw)
	}
	rcv.waitFor(t, "ping", 1)
	if code, raw := p.admin(t, "POST", "/projects/site/webhooks/nope/test", ""); code != 404 || !strings.Contains(string(raw), "NOT_FOUND") {
		t.Errorf("ping of an unknown webhook: %d %s", code, raw)
	}
	if code, raw := p.admin(t, "GET", "/projects/site/webhooks/main/deliveries?cursor=forged", ""); code != 400 || !strings.Contains(string(raw), "INVALID_CURSOR") {
		t.Errorf("forged cursor: %d %s", code, raw)
	}
	p.stop(t)
}

// hooksEnv is the environment of a gateway whose webhooks and email go to the test's loopback
// receiver and SMTP server mail, polling and backing off in milliseconds.
func hooksEnv(mail *smtptest.Server) []string {
	return []string{
		"GATEHOUSE_EGRESS_ALLOW_PRIVATE_NETWORKS=true",
		"GATEHOUSE_EMAIL_TRANSPORT=smtp", "GATEHOUSE_EMAIL_SMTP_HOST=127.0.0.1",
		"GATEHOUSE_EMAIL_SMTP_PORT=" + strconv.Itoa(mail.Port), "GATEHOUSE_EMAIL_SMTP_TLS=none",
		"GATEHOUSE_WEBHOOKS_POLL_INTERVAL=20ms", "GATEHOUSE_WEBHOOKS_BASE_BACKOFF=20ms",
	}
}

// startHooksGateway starts a gateway on a new data folder with an empty config file, the
// tenants document doc and hooksEnv(mail).
func startHooksGateway(t *testing.T, mail *smtptest.Server, doc string) *proc {
	t.Helper()
	data := t.TempDir()
	cfg := filepath.Join(data, "empty.yaml")
	tenants := filepath.Join(data, "tenants.yaml")
	if err := os.WriteFile(cfg, []byte("{}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(tenants, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	return startProcEnv(t, hooksEnv(mail), "--data", data, "--config", cfg, "--tenants", tenants)
}

// SIGKILL after a submission was acknowledged and before its notification and webhook were
// delivered (the SMTP server and the receiver hold them in flight) loses neither: after the
// restart on the same data folder both arrive.
func TestNotificationAndWebhookSurviveSIGKILL(t *testing.T) {
	t.Parallel()
	rcv := newHookReceiver(t)
	rcv.mu.Lock()
	rcv.failed = true // no scripted 500 here
	rcv.mu.Unlock()
	release := make(chan struct{})
	var held atomic.Int32
	holding := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		held.Add(1)
		select { // hold the delivery in flight until the process is gone
		case <-release:
		case <-r.Context().Done():
		}
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	defer holding.Close()
	defer close(release)
	mail := smtptest.Start(t, nil)
	mail.SetDelay(time.Hour)

	data := t.TempDir()
	cfg := emptyConfig(t, data)
	write := func(url string) string {
		f := filepath.Join(data, "tenants.yaml")
		if err := os.WriteFile(f, []byte(hooksDoc(url)), 0o600); err != nil {
			t.Fatal(err)
		}
		return f
	}
	env := hooksEnv(mail)
	p := startProcEnv(t, env, "--data", data, "--config", cfg, "--tenants", write(holding.URL))
	code, body := do(t, "POST", p.url+"/forms/forms/contact/submit", "pk_live_site_web", `{"data":{"name":"Kim","email":"kim@example.com"}}`)
	if code != 201 {
		t.Fatalf("submit: %d %s", code, body)
	}
	var receipt struct{ ID string }
	_ = json.Unmarshal([]byte(body), &receipt)
	for held.Load() == 0 { // the webhook is in flight
		time.Sleep(5 * time.Millisecond)
	}
	if err := p.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-p.done
	p.done <- nil
	mail.SetDelay(0)

	// The restart points the webhook at a receiver that answers (the same delivery is sent:
	// the queue holds it, not the URL).
	p2 := startProcEnv(t, env, "--data", data, "--config", cfg, "--tenants", write(rcv.URL))
	subs := rcv.waitFor(t, "form.submitted", 1)
	if subs[0].Data["id"] != receipt.ID {
		t.Errorf("form.submitted after the restart = %+v, want submission %s", subs[0].Data, receipt.ID)
	}
	rcv.waitFor(t, "email.delivered", 2) // the notification and the auto-reply
	owner := 0
	for _, m := range mail.Messages() {
		if m.To[0] == "owner@acme.test" && strings.Contains(string(m.Data), "Kim") {
			owner++
		}
	}
	if owner == 0 {
		t.Error("the notification was lost across the SIGKILL")
	}
	p2.stop(t)
}
