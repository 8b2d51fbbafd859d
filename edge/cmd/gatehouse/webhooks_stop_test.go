package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/products/email/smtptest"
)

// SIGTERM while a webhook attempt is in flight (the receiver holds it): the gateway lets the
// attempt finish and records it before it exits, so the restarted gateway does not send it
// again. Every event (the submission's form.submitted, the email.delivered of its notification
// and auto-reply) reaches the receiver once, and the deliveries log holds one succeeded
// attempt each.
func TestWebhookInFlightAtSIGTERM(t *testing.T) {
	t.Parallel()
	var (
		mu   sync.Mutex
		seen = map[string]int{}
	)
	arrived := make(chan struct{}, 16)
	open, cut := make(chan struct{}), make(chan struct{}, 16)
	var openOnce sync.Once
	release := func() { openOnce.Do(func() { close(open) }) }
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body) // read to the end: the server then notices a hang-up
		id := r.Header.Get("webhook-id")
		mu.Lock()
		seen[id]++
		first := seen[id] == 1
		mu.Unlock()
		arrived <- struct{}{}
		if first {
			select {
			case <-open:
			case <-r.Context().Done():
				cut <- struct{}{}
				return
			}
		}
		w.WriteHeader(http.StatusOK)
	}))
	defer rcv.Close()
	defer release()
	mail := smtptest.Start(t, nil)
	data := t.TempDir()
	cfg, tenants := filepath.Join(data, "empty.yaml"), filepath.Join(data, "tenants.yaml")
	for f, body := range map[string]string{cfg: "{}\n", tenants: hooksDoc(rcv.URL)} {
		if err := os.WriteFile(f, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	args := []string{"--data", data, "--config", cfg, "--tenants", tenants}
	p := startProcEnv(t, hooksEnv(mail), args...)
	code, body := do(t, "POST", p.url+"/forms/forms/contact/submit", "pk_live_site_web", `{"data":{"name":"Lee","email":"lee@example.com"}}`)
	if code != 201 {
		t.Fatalf("submit: %d %s", code, body)
	}
	select {
	case <-arrived: // an attempt is in flight, held by the receiver
	case <-time.After(60 * time.Second):
		t.Fatal("no webhook reached the receiver")
	}
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	// The listener closes first; the workers stop after it. Stop must not cut the held
	// attempt short: watch for a hang-up for a moment before releasing it (this wait can only
	// miss a regression, never fail a correct gateway).
	for {
		resp, err := http.Get(p.url + "/healthz")
		if err != nil {
			break
		}
		resp.Body.Close()
		time.Sleep(5 * time.Millisecond)
	}
	select {
	case <-cut:
		t.Fatal("the shutdown cut the attempt in flight short")
	case <-time.After(300 * time.Millisecond):
	}
	release()
	select {
	case err := <-p.done:
		p.done <- err
		if err != nil {
			t.Fatalf("gatehouse exited with %v", err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("gatehouse did not stop on SIGTERM")
	}

	p2 := startProcEnv(t, hooksEnv(mail), args...)
	type attempt struct{ DeliveryID, Outcome, Event string }
	var log []attempt
	await(t, "three succeeded attempts in the deliveries log", func() bool {
		code, raw := p2.admin(t, "GET", "/projects/site/webhooks/main/deliveries?limit=200", "")
		var page struct{ Items []attempt }
		if code != 200 || json.Unmarshal(raw, &page) != nil {
			t.Fatalf("deliveries log: %d %s", code, raw)
		}
		log = page.Items
		ok := 0
		for _, a := range log {
			if a.Outcome == "succeeded" {
				ok++
			}
		}
		return ok == 3
	})
	p2.stop(t)
	if len(log) != 3 {
		t.Errorf("deliveries log = %+v, want three attempts (form.submitted, two email.delivered)", log)
	}
	mu.Lock()
	defer mu.Unlock()
	for id, n := range seen {
		if n != 1 {
			t.Errorf("webhook %s reached the receiver %d times, want once", id, n)
		}
	}
	if len(seen) != 3 {
		t.Errorf("the receiver saw %d webhooks, want 3", len(seen))
	}
}
