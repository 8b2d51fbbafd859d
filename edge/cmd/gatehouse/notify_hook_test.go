package main

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// Form notifications and auto-replies pass through the project's email.send plugins like an
// API send (issue 16): the redactor example masks the template variable "message" of both and
// tags them "redacted", before they are queued with the submission.
func TestFormEmailsPassTheEmailSendHook(t *testing.T) {
	t.Parallel()
	mods := buildExamples(t, "redactor")
	data := t.TempDir()
	tenants := fmt.Sprintf(`orgs:
  - slug: acme
    projects:
      - id: site
        keys:
          - {name: web, value: pk_live_site_web, products: [forms]}
        email:
          from: {email: forms@acme.test}
          templates:
            - {slug: copy, subject: "From {{name}}", body: "They wrote: {{message}}"}
        forms:
          - slug: contact
            published: true
            fields:
              - {name: name, type: text, required: true}
              - {name: email, type: email, required: true}
              - {name: message, type: textarea}
            notify: {to: [owner@acme.test], template: copy}
            autoReply: {emailField: email, template: copy}
        plugins:
          - {name: redact, module: %q, hooks: [email.send], config: {fields: message}}
`, mods["redactor"])
	p := startProc(t, "--data", data, "--config", writeFile(t, data, "config.yaml", "{}\n"),
		"--tenants", writeFile(t, data, "tenants.yaml", tenants))
	code, body := do(t, "POST", p.url+"/forms/forms/contact/submit", "pk_live_site_web",
		`{"data":{"name":"Ann","email":"ann@example.com","message":"the secret plan"}}`)
	if code != 200 && code != 201 {
		t.Fatalf("submit = %d %s", code, body)
	}
	code, raw := p.admin(t, "GET", "/email/messages?tag=redacted", "")
	var list struct {
		Items []struct {
			To       struct{ Email string }
			Subject  string
			BodyText string
			Tags     []string
		}
	}
	if err := json.Unmarshal(raw, &list); code != 200 || err != nil {
		t.Fatalf("list redacted messages = %d %s", code, raw)
	}
	got := map[string]bool{}
	for _, m := range list.Items {
		for _, tag := range []string{"form-notification", "form-auto-reply"} {
			if slices.Contains(m.Tags, tag) {
				got[tag+" to "+m.To.Email] = true
			}
		}
		if strings.Contains(m.BodyText, "secret plan") || !strings.Contains(m.BodyText, "[redacted]") || m.Subject != "From Ann" {
			t.Errorf("message to %s: subject %q, body %q; want the plugin's mask in the body", m.To.Email, m.Subject, m.BodyText)
		}
	}
	if len(list.Items) != 2 || !got["form-notification to owner@acme.test"] || !got["form-auto-reply to ann@example.com"] {
		t.Errorf("redacted messages = %s, want the notification to owner@acme.test and the auto-reply to ann@example.com", raw)
	}
}
