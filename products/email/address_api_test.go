package email_test

import (
	"net/mail"
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/products/email"
)

// TestUnencodableAddressRefusedAtSend: an address or name the sender could not write is 400
// VALIDATION_FAILED at the send, naming the field; the hard cases that can be written (quotes
// in a name, non-ASCII names, an internationalized domain) are accepted and reach the SMTP
// server with headers that read back the same.
func TestUnencodableAddressRefusedAtSend(t *testing.T) {
	t.Parallel()
	e := start(t, envOptions{})
	send := func(field string, addr map[string]any) map[string]any {
		body := map[string]any{"to": map[string]any{"email": "a@example.com"}, "subject": "Hi", "bodyText": "Hello"}
		body[field] = addr
		return body
	}
	refused := []struct {
		name, field string
		addr        map[string]any
		detail      string
	}{
		{"CRLF in to.name", "to", map[string]any{"email": "a@example.com", "name": "A\r\nBcc: x@evil.test"}, "to.name"},
		{"NUL in from.name", "from", map[string]any{"email": "a@example.com", "name": "A\x00"}, "from.name"},
		{"control in replyTo.name", "replyTo", map[string]any{"email": "a@example.com", "name": "A\x07"}, "replyTo.name"},
		{"overlong to.name", "to", map[string]any{"email": "a@example.com", "name": strings.Repeat("n", 300)}, "to.name"},
		{"non-ascii local part", "to", map[string]any{"email": "josé@example.com"}, "to.email"},
		{"overlong local part", "from", map[string]any{"email": strings.Repeat("l", 65) + "@example.com"}, "from.email"},
		{"bad domain label", "replyTo", map[string]any{"email": "a@" + strings.Repeat("d", 64) + ".com"}, "replyTo.email"},
		{"address literal", "to", map[string]any{"email": "a@[10.0.0.1]"}, "to.email"},
	}
	for _, tc := range refused {
		r := e.Do("POST", "/email/notifications/send", send(tc.field, tc.addr), "X-API-Key", "sk_live_demo_server")
		if r.Status != 400 || r.Code() != "VALIDATION_FAILED" || !strings.Contains(string(r.Body), `"field":"`+tc.detail+`"`) {
			t.Errorf("%s: send = %d %s, want 400 VALIDATION_FAILED on %s", tc.name, r.Status, r.Body, tc.detail)
		}
	}

	body := send("from", map[string]any{"email": "news@acme.test", "name": `Acme "Weekly", Ünïcode`})
	body["to"] = map[string]any{"email": "info@bücher.example", "name": "Zoë <Tester>"}
	body["replyTo"] = map[string]any{"email": "help@acme.test", "name": "Support \\ Team"}
	id := e.send(t, body)
	e.waitStatus(t, id, email.StatusDelivered)
	var got *mail.Message
	for _, m := range e.smtp.Messages() {
		if m.Header().Get("X-Gatehouse-Message-Id") == id {
			got, _ = mail.ReadMessage(strings.NewReader(string(m.Data)))
			if len(m.To) != 1 || m.To[0] != "info@xn--bcher-kva.example" {
				t.Errorf("RCPT TO %v, want the A-label form info@xn--bcher-kva.example", m.To)
			}
		}
	}
	if got == nil {
		t.Fatalf("message %s never reached the SMTP server", id)
	}
	for h, want := range map[string]mail.Address{
		"From":     {Name: `Acme "Weekly", Ünïcode`, Address: "news@acme.test"},
		"To":       {Name: "Zoë <Tester>", Address: "info@xn--bcher-kva.example"},
		"Reply-To": {Name: "Support \\ Team", Address: "help@acme.test"},
	} {
		a, err := got.Header.AddressList(h)
		if err != nil || len(a) != 1 || *a[0] != want {
			t.Errorf("%s: %q reads back as %v, %v; want %v", h, got.Header.Get(h), a, err, want)
		}
	}
}
