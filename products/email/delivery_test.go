package email_test

import (
	"io"
	"mime"
	"mime/multipart"
	"net/mail"
	"os"
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/products/email"
	"github.com/gatehouse-dev/gatehouse/products/email/smtptest"
)

// parts reads a message and returns its text/plain and text/html parts, checking the
// multipart/alternative structure.
func parts(t *testing.T, raw []byte) (mail.Header, string, string) {
	t.Helper()
	msg, err := mail.ReadMessage(strings.NewReader(string(raw)))
	if err != nil {
		t.Fatalf("ReadMessage: %v\n%s", err, raw)
	}
	mt, params, err := mime.ParseMediaType(msg.Header.Get("Content-Type"))
	if err != nil || mt != "multipart/alternative" {
		t.Fatalf("Content-Type = %q, want multipart/alternative", msg.Header.Get("Content-Type"))
	}
	mr := multipart.NewReader(msg.Body, params["boundary"])
	var text, html string
	for {
		p, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(p) // NextPart decodes quoted-printable
		ct, _, _ := mime.ParseMediaType(p.Header.Get("Content-Type"))
		switch ct {
		case "text/plain":
			text = string(b)
		case "text/html":
			html = string(b)
		}
	}
	return msg.Header, text, html
}

func TestDeliveredOverSMTP(t *testing.T) {
	t.Parallel()
	e := start(t, envOptions{})
	id := e.send(t, welcome("reader@example.com"))
	m := e.waitStatus(t, id, email.StatusDelivered)
	var events []string
	for _, l := range m.Log {
		events = append(events, string(l.Status))
	}
	if strings.Join(events, ",") != "queued,sent,delivered" || m.Log[2].Code != 250 {
		t.Errorf("log = %+v, want queued, sent, delivered with code 250", m.Log)
	}
	got := e.smtp.Messages()
	if len(got) != 1 {
		t.Fatalf("server received %d messages, want 1", len(got))
	}
	if got[0].From != "hello@acme.test" || len(got[0].To) != 1 || got[0].To[0] != "reader@example.com" {
		t.Errorf("envelope = %s -> %v", got[0].From, got[0].To)
	}
	h, text, html := parts(t, got[0].Data)
	dec := new(mime.WordDecoder)
	checks := map[string]string{
		"From":                        `"Acme Ünïcode" <hello@acme.test>`,
		"To":                          `"Zoë <Tester>" <reader@example.com>`,
		"Reply-To":                    `<support@acme.test>`,
		"Subject":                     "Welcome, Ada & <b>Co</b>",
		"Message-Id":                  "<" + strings.TrimPrefix(id, "msg_") + "@acme.test>",
		"X-Gatehouse-Message-Id":      id,
		"X-Gatehouse-Tags":            "onboarding, beta",
		"X-Gatehouse-Metadata-Userid": "u-42",
	}
	for k, want := range checks {
		v, _ := dec.DecodeHeader(h.Get(k))
		if k == "From" || k == "To" {
			a, err := mail.ParseAddress(h.Get(k))
			if err != nil {
				t.Errorf("%s %q: %v", k, h.Get(k), err)
				continue
			}
			v = a.String()
			w, _ := mail.ParseAddress(want)
			want = w.String()
		}
		if v != want && !(k == "Reply-To" && strings.Trim(v, "<>") == strings.Trim(want, "<>")) {
			t.Errorf("header %s = %q, want %q", k, v, want)
		}
	}
	if _, err := h.Date(); err != nil {
		t.Errorf("Date header %q: %v", h.Get("Date"), err)
	}
	if !strings.Contains(html, "Hi Ada &amp; &lt;b&gt;Co&lt;/b&gt;, welcome to Gatehouse. You have 3.5 credits; vip=true.") {
		t.Errorf("html part = %q, want the escaped variables", html)
	}
	if !strings.Contains(text, "Hi Ada & <b>Co</b>, welcome to Gatehouse. You have 3.5 credits; vip=true.") {
		t.Errorf("text part = %q, want the derived text with raw variables", text)
	}
}

func TestHardBounceSuppresses(t *testing.T) {
	t.Parallel()
	e := start(t, envOptions{rule: func(rcpt string, n int) smtptest.Reply {
		if strings.HasPrefix(rcpt, "gone@") {
			return smtptest.Reply{Code: 550, Message: "no such user"}
		}
		return smtptest.Reply{}
	}})
	id := e.send(t, welcome("gone@example.com"))
	m := e.waitStatus(t, id, email.StatusBounced)
	last := m.Log[len(m.Log)-1]
	if last.Code != 550 || !strings.Contains(last.Detail, "no such user") {
		t.Errorf("bounce log entry = %+v, want code 550 and the reply text", last)
	}
	r := e.Admin("GET", "/orgs/acme/suppressions", nil)
	if !strings.Contains(string(r.Body), `"gone@example.com"`) || !strings.Contains(string(r.Body), `"bounce"`) {
		t.Errorf("suppressions = %s, want gone@example.com from a bounce", r.Body)
	}
	// The next send to the address (in another case) is accepted and suppressed, never tried.
	id2 := e.send(t, welcome("GONE@example.com"))
	m2 := e.waitStatus(t, id2, email.StatusSuppressed)
	if n := e.smtp.Attempts("gone@example.com"); n != 1 {
		t.Errorf("RCPT attempts for the suppressed address = %d, want 1", n)
	}
	if m2.Attempts != 0 {
		t.Errorf("suppressed message attempts = %d, want 0", m2.Attempts)
	}
	// The tenants document's suppression matches case-insensitively.
	id3 := e.send(t, welcome("blocked@EXAMPLE.com"))
	e.waitStatus(t, id3, email.StatusSuppressed)
	// Removing the address lets sends through again.
	if r := e.Admin("DELETE", "/orgs/acme/suppressions/blocked@example.com", nil); r.Status != 204 {
		t.Fatalf("DELETE suppression = %d", r.Status)
	}
	e.waitStatus(t, e.send(t, welcome("blocked@example.com")), email.StatusDelivered)
	// An address longer than RFC 5321 allows is refused (suppressions are keyed by address).
	long := strings.Repeat("a", 300) + "@example.com"
	if r := e.Admin("POST", "/orgs/acme/suppressions", map[string]string{"email": long}); r.Status != 400 || !strings.Contains(string(r.Body), "VALIDATION_FAILED") {
		t.Errorf("POST suppression of a %d-byte address = %d %s, want 400 VALIDATION_FAILED", len(long), r.Status, r.Body)
	}
}

func TestEvents(t *testing.T) {
	t.Parallel()
	e := start(t, envOptions{})
	id := e.send(t, welcome("reader@example.com"))
	e.waitStatus(t, id, email.StatusDelivered)
	cases := []struct {
		name   string
		body   any
		status int
		code   string
		want   email.Status
	}{
		{"bad type", map[string]any{"messageId": id, "type": "opened"}, 400, "VALIDATION_FAILED", ""},
		{"no id", map[string]any{"type": "bounce"}, 400, "VALIDATION_FAILED", ""},
		{"unknown id", map[string]any{"messageId": "msg_01jzzzzzzzzzzzzzzzzzzzzzzz", "type": "bounce"}, 404, "MESSAGE_NOT_FOUND", ""},
		{"delivered again changes nothing", map[string]any{"messageId": id, "type": "delivered"}, 200, "", email.StatusDelivered},
		{"complaint", map[string]any{"messageId": id, "type": "complaint", "detail": "feedback loop"}, 200, "", email.StatusSpam},
		{"complaint again", map[string]any{"messageId": id, "type": "complaint"}, 200, "", email.StatusSpam},
		{"bounce after spam", map[string]any{"messageId": id, "type": "bounce"}, 409, "INVALID_TRANSITION", ""},
		{"delivered after spam", map[string]any{"messageId": id, "type": "delivered"}, 409, "INVALID_TRANSITION", ""},
	}
	for _, tc := range cases {
		r := e.Admin("POST", "/email/events", tc.body)
		if r.Status != tc.status || r.Code() != tc.code {
			t.Errorf("%s: POST /email/events = %d %q, want %d %q; %s", tc.name, r.Status, r.Code(), tc.status, tc.code, r.Body)
		}
		if tc.want != "" && r.JSON(t)["status"] != string(tc.want) {
			t.Errorf("%s: status %v, want %s", tc.name, r.JSON(t)["status"], tc.want)
		}
	}
	m := e.waitStatus(t, id, email.StatusSpam)
	if last := m.Log[len(m.Log)-1]; last.Event != "complaint" || last.Detail != "feedback loop" {
		t.Errorf("last log entry = %+v", last)
	}
	r := e.Admin("GET", "/orgs/acme/suppressions", nil)
	if !strings.Contains(string(r.Body), `"reader@example.com"`) || !strings.Contains(string(r.Body), `"complaint"`) {
		t.Errorf("suppressions = %s, want reader@example.com from a complaint", r.Body)
	}
	// A late bounce on a delivered message bounces it and suppresses the address.
	id2 := e.send(t, welcome("late@example.com"))
	e.waitStatus(t, id2, email.StatusDelivered)
	if r := e.Admin("POST", "/email/events", map[string]any{"messageId": id2, "type": "bounce", "detail": "mailbox full for good"}); r.Status != 200 {
		t.Fatalf("bounce event = %d %s", r.Status, r.Body)
	}
	e.waitStatus(t, id2, email.StatusBounced)
	if r := e.Admin("GET", "/orgs/acme/suppressions", nil); !strings.Contains(string(r.Body), "late@example.com") {
		t.Errorf("late bounce did not suppress: %s", r.Body)
	}
}

func TestRetries(t *testing.T) {
	t.Parallel()
	e := start(t, envOptions{maxAttempts: 4, rule: func(rcpt string, n int) smtptest.Reply {
		switch {
		case strings.HasPrefix(rcpt, "flaky@") && n <= 2:
			return smtptest.Reply{Code: 451, Message: "try again later"}
		case strings.HasPrefix(rcpt, "down@"):
			return smtptest.Reply{Code: 421, Message: "service not available"}
		case strings.HasPrefix(rcpt, "greylist@"):
			return smtptest.Reply{Code: 450, Message: "greylisted"}
		}
		return smtptest.Reply{}
	}})
	flaky := e.send(t, welcome("flaky@example.com"))
	forever := e.send(t, welcome("greylist@example.com"))
	m := e.waitStatus(t, flaky, email.StatusDelivered)
	deferred := 0
	for _, l := range m.Log {
		if l.Event == "deferred" {
			deferred++
			if l.Code != 451 {
				t.Errorf("deferred entry code = %d, want 451", l.Code)
			}
		}
	}
	if deferred != 2 || m.Attempts != 3 {
		t.Errorf("flaky: %d deferred entries, %d attempts; want 2 and 3; log %+v", deferred, m.Attempts, m.Log)
	}
	f := e.waitStatus(t, forever, email.StatusFailed)
	if f.Attempts != 4 || e.smtp.Attempts("greylist@example.com") != 4 {
		t.Errorf("4xx forever: %d attempts, server saw %d, want 4", f.Attempts, e.smtp.Attempts("greylist@example.com"))
	}
	if last := f.Log[len(f.Log)-1]; !strings.Contains(last.Detail, "gave up after 4 attempts") || last.Code != 450 {
		t.Errorf("failed entry = %+v", last)
	}
	if n := len(e.smtp.Messages()); n != 1 {
		t.Errorf("server accepted %d messages, want 1", n)
	}
	metrics := string(e.Do("GET", "/metrics", nil).Body)
	for _, want := range []string{
		`gatehouse_email_delivery_outcomes_total{outcome="deferred"} 5`,
		`gatehouse_email_delivery_outcomes_total{outcome="delivered"} 1`,
		`gatehouse_email_delivery_outcomes_total{outcome="failed"} 1`,
		`gatehouse_email_sends_total 2`,
	} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}

func TestIdempotencyKey(t *testing.T) {
	t.Parallel()
	e := start(t, envOptions{})
	first := e.send(t, welcome("idem@example.com"), "Idempotency-Key", "order-1")
	e.waitStatus(t, first, email.StatusDelivered)
	again := e.send(t, welcome("idem@example.com"), "Idempotency-Key", "order-1")
	if again != first {
		t.Errorf("same Idempotency-Key gave %s, want the first message %s", again, first)
	}
	// The same key with another request is refused, never answered with the first message.
	if r := e.Do("POST", "/email/notifications/send", welcome("someone-else@example.com"), "X-API-Key", "sk_live_demo_server", "Idempotency-Key", "order-1"); r.Status != 409 || r.Code() != "IDEMPOTENCY_KEY_REUSED" {
		t.Errorf("same key, other request = %d %s, want 409 IDEMPOTENCY_KEY_REUSED", r.Status, r.Body)
	}
	other := e.send(t, welcome("idem@example.com"), "Idempotency-Key", "order-2")
	if other == first {
		t.Error("another Idempotency-Key gave the first message")
	}
	e.waitStatus(t, other, email.StatusDelivered)
	// Concurrent sends with one key make one message.
	ids := make(chan string, 8)
	for i := 0; i < 8; i++ {
		go func() {
			r := e.Do("POST", "/email/notifications/send", welcome("idem@example.com"), "X-API-Key", "sk_live_demo_server", "Idempotency-Key", "burst")
			ids <- string(r.Body)
		}()
	}
	seen := map[string]bool{}
	for i := 0; i < 8; i++ {
		b := <-ids
		seen[b[:strings.Index(b, `","status"`)]] = true
	}
	if len(seen) != 1 {
		t.Errorf("8 concurrent sends with one key made %d messages, want 1", len(seen))
	}
}

func TestOutbox(t *testing.T) {
	t.Parallel()
	e := start(t, envOptions{outbox: true})
	id := e.send(t, welcome("reader@example.com"))
	m := e.waitStatus(t, id, email.StatusDelivered)
	raw, err := os.ReadFile(e.out.Path(id))
	if err != nil {
		t.Fatalf("outbox file: %v", err)
	}
	h, text, html := parts(t, raw)
	if h.Get("X-Gatehouse-Message-Id") != id || !strings.Contains(text, "welcome to Gatehouse") || !strings.Contains(html, "<p>") {
		t.Errorf("outbox .eml: header %q, text %q, html %q", h.Get("X-Gatehouse-Message-Id"), text, html)
	}
	if last := m.Log[len(m.Log)-1]; !strings.Contains(last.Detail, "outbox") {
		t.Errorf("delivered entry = %+v, want the outbox path", last)
	}
	// A text-only inline send is a single text/plain part.
	id2 := e.send(t, map[string]any{"to": map[string]any{"email": "t@example.com"}, "subject": "Plain", "bodyText": "just text"})
	e.waitStatus(t, id2, email.StatusDelivered)
	raw, _ = os.ReadFile(e.out.Path(id2))
	msg, err := mail.ReadMessage(strings.NewReader(string(raw)))
	if err != nil || !strings.HasPrefix(msg.Header.Get("Content-Type"), "text/plain") {
		t.Errorf("text-only message Content-Type = %q (%v)", msg.Header.Get("Content-Type"), err)
	}
}
