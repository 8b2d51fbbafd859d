package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/products/email/smtptest"
)

// eventsDoc is a project whose webhook subscribes to the email and asset events; the org
// suppresses blocked@example.com.
func eventsDoc(url string) string {
	return fmt.Sprintf(`orgs:
  - slug: acme
    suppressions: [blocked@example.com]
    projects:
      - id: site
        keys:
          - {name: server, value: sk_live_site_events, products: [email, files]}
        email:
          from: {email: hello@acme.test, name: Acme}
        webhooks:
          - name: main
            url: %q
            events: [email.sent, email.delivered, email.suppressed, email.failed, asset.completed]
            secret: %s
`, url, hookSecret)
}

// TestWebhookEmailAndAssetEvents: through the public APIs of the real binary, a send makes
// email.sent then email.delivered, a send to a suppressed address makes email.suppressed (and
// nothing else), and an upload (presign, PUT, complete) makes asset.completed, each delivered
// once and verified with the Standard Webhooks library; the delivery metric is on /metrics.
func TestWebhookEmailAndAssetEvents(t *testing.T) {
	t.Parallel()
	rcv := newHookReceiver(t)
	rcv.mu.Lock()
	rcv.failed = true // every request answered 200
	rcv.mu.Unlock()
	mail := smtptest.Start(t, nil)
	p := startHooksGateway(t, mail, eventsDoc(rcv.URL))
	const key = "sk_live_site_events"

	send := func(to string) string {
		t.Helper()
		code, body := do(t, "POST", p.url+"/email/notifications/send", key,
			`{"to":{"email":"`+to+`"},"subject":"Hello","bodyText":"Hi there","tags":["events"]}`)
		var rc struct{ ID string }
		if err := json.Unmarshal([]byte(body), &rc); code != 202 || err != nil || rc.ID == "" {
			t.Fatalf("send to %s: %d %s", to, code, body)
		}
		return rc.ID
	}
	okID := send("ok@example.com")
	blockedID := send("blocked@example.com")

	// An upload through the files API: presign, PUT the bytes (no key), complete.
	img := uniquePNG(1)
	code, _, body := p.send(t, "POST", "/files/upload/presigned", "application/json",
		fmt.Sprintf(`{"filename":"hook.png","mimeType":"image/png","size":%d}`, len(img)), "X-API-Key", key)
	var slot struct{ AssetID, UploadURL string }
	if err := json.Unmarshal([]byte(body), &slot); code != 200 || err != nil || slot.AssetID == "" {
		t.Fatalf("presign: %d %s", code, body)
	}
	u, err := url.Parse(slot.UploadURL)
	if err != nil {
		t.Fatalf("uploadUrl %q: %v", slot.UploadURL, err)
	}
	req, _ := http.NewRequest("PUT", p.url+u.RequestURI(), bytes.NewReader(img))
	req.Header.Set("Content-Type", "image/png")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("PUT upload: %d", resp.StatusCode)
	}
	if code, _, body := p.send(t, "POST", "/files/upload/complete", "application/json", `{"assetId":"`+slot.AssetID+`"}`, "X-API-Key", key); code != 200 {
		t.Fatalf("complete: %d %s", code, body)
	}

	assets := rcv.waitFor(t, "asset.completed", 1)
	if assets[0].Data["id"] != slot.AssetID || assets[0].Data["mimeType"] != "image/png" || assets[0].Data["size"] != float64(len(img)) {
		t.Errorf("asset.completed data = %+v, want asset %s", assets[0].Data, slot.AssetID)
	}
	rcv.waitFor(t, "email.suppressed", 1)
	rcv.waitFor(t, "email.delivered", 1)
	rcv.waitFor(t, "email.sent", 1)

	// One event per state change, in order per message: ok is sent then delivered, the
	// suppressed address is only suppressed; nothing failed.
	rcv.mu.Lock()
	perMessage := map[string][]string{}
	ids := map[string]string{}
	for _, e := range rcv.events {
		id, _ := e.Data["id"].(string)
		if strings.HasPrefix(e.Type, "email.") {
			perMessage[id] = append(perMessage[id], e.Type)
			if e.Data["status"] != strings.TrimPrefix(e.Type, "email.") {
				t.Errorf("%s carries status %v", e.Type, e.Data["status"])
			}
		}
		if prev, dup := ids[e.ID]; dup {
			t.Errorf("webhook-id %s delivered twice (%s, %s) to a receiver that answered 200", e.ID, prev, e.Type)
		}
		ids[e.ID] = e.Type
	}
	assetEvents := 0
	for _, e := range rcv.events {
		if e.Type == "asset.completed" {
			assetEvents++
		}
	}
	rcv.mu.Unlock()
	if got := strings.Join(perMessage[okID], " "); got != "email.sent email.delivered" {
		t.Errorf("events of the delivered message %s = %q, want email.sent then email.delivered", okID, got)
	}
	if got := strings.Join(perMessage[blockedID], " "); got != "email.suppressed" {
		t.Errorf("events of the suppressed message %s = %q, want email.suppressed only", blockedID, got)
	}
	if assetEvents != 1 || len(perMessage) != 2 {
		t.Errorf("%d asset.completed events and events for %d messages, want 1 and 2: %v", assetEvents, len(perMessage), perMessage)
	}
	for _, m := range mail.Messages() {
		if m.To[0] == "blocked@example.com" {
			t.Error("the suppressed address reached the SMTP server")
		}
	}

	// The delivery metric counts the successful asset.completed attempt (observed just after
	// the receiver answered: read until it is there).
	want := `gatehouse_webhook_deliveries_total{event="asset.completed",outcome="success"} 1`
	for deadline := time.Now().Add(30 * time.Second); ; {
		code, _, body := p.send(t, "GET", "/metrics", "", "")
		if code == 200 && strings.Contains(body, want) && strings.Contains(body, `gatehouse_webhook_delivery_seconds_count{event="email.sent",outcome="success"} 1`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("/metrics (%d) lacks %s:\n%s", code, want, grepLines(body, "gatehouse_webhook"))
		}
		time.Sleep(10 * time.Millisecond)
	}
	p.stop(t)
}

// grepLines returns the lines of s that contain sub.
func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// TestWebhookEmailFailed: an SMTP server that refuses the sender for good (a 5xx to MAIL from a
// session that did not authenticate) fails the message: one email.failed event, with the
// server's answer, and no email.sent.
func TestWebhookEmailFailed(t *testing.T) {
	t.Parallel()
	rcv := newHookReceiver(t)
	mail := smtptest.StartWith(t, smtptest.Options{Users: map[string]string{"someone": "secret"}})
	p := startHooksGateway(t, mail, eventsDoc(rcv.URL))
	code, body := do(t, "POST", p.url+"/email/notifications/send", "sk_live_site_events",
		`{"to":{"email":"ok@example.com"},"subject":"Hello","bodyText":"Hi there"}`)
	var rc struct{ ID string }
	if err := json.Unmarshal([]byte(body), &rc); code != 202 || err != nil {
		t.Fatalf("send: %d %s", code, body)
	}
	failed := rcv.waitFor(t, "email.failed", 1)
	if failed[0].Data["id"] != rc.ID || !strings.Contains(fmt.Sprint(failed[0].Data["detail"]), "MAIL FROM") {
		t.Errorf("email.failed = %+v, want message %s with the server's answer to MAIL FROM", failed[0].Data, rc.ID)
	}
	rcv.mu.Lock()
	var types []string
	for _, e := range rcv.events {
		types = append(types, e.Type)
	}
	rcv.mu.Unlock()
	if strings.Join(types, " ") != "email.failed" {
		t.Errorf("events = %v, want email.failed only", types)
	}
	if mail.Len() != 0 {
		t.Errorf("the SMTP server took %d messages", mail.Len())
	}
	p.stop(t)
}
