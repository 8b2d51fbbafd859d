package webhooks_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/gatehouse-dev/gatehouse/edge/edgetest/storetest"
	"github.com/gatehouse-dev/gatehouse/edge/egress"
	"github.com/gatehouse-dev/gatehouse/edge/store"
	"github.com/gatehouse-dev/gatehouse/edge/tenancy"
	"github.com/gatehouse-dev/gatehouse/edge/webhooks"
)

const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw" // 24 bytes, the specification's example

// received is one request a receiver accepted after verifying its signature.
type received struct {
	ID, Type string
	Data     map[string]any
}

// receiver is a real HTTP endpoint on loopback that verifies every request with the Standard
// Webhooks library and answers with the next status of its script (200 once it runs out).
type receiver struct {
	*httptest.Server
	mu     sync.Mutex
	script []int
	got    chan received
	bad    chan error
}

func newReceiver(t *testing.T, secret string, script ...int) *receiver {
	t.Helper()
	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		t.Fatal(err)
	}
	r := &receiver{script: script, got: make(chan received, 64), bad: make(chan error, 64)}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		raw, _ := io.ReadAll(req.Body)
		if err := wh.Verify(raw, req.Header); err != nil {
			r.bad <- err
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		var b struct {
			Type      string         `json:"type"`
			Timestamp string         `json:"timestamp"`
			Data      map[string]any `json:"data"`
		}
		if err := json.Unmarshal(raw, &b); err != nil || b.Timestamp == "" {
			r.bad <- fmt.Errorf("body %s: %v", raw, err)
		}
		r.got <- received{ID: req.Header.Get("webhook-id"), Type: b.Type, Data: b.Data}
		r.mu.Lock()
		status := 200
		if len(r.script) > 0 {
			status, r.script = r.script[0], r.script[1:]
		}
		r.mu.Unlock()
		w.WriteHeader(status)
	}))
	t.Cleanup(r.Close)
	return r
}

// next waits for the receiver's next verified request.
func (r *receiver) next(t *testing.T) received {
	t.Helper()
	select {
	case got := <-r.got:
		return got
	case err := <-r.bad:
		t.Fatalf("receiver refused a request: %v", err)
	case <-time.After(20 * time.Second):
		t.Fatal("receiver got nothing")
	}
	return received{}
}

type env struct {
	db  *store.DB
	ten *tenancy.Service
	svc *webhooks.Service
	w   *webhooks.Worker
}

func doc(url, secret string, events ...string) string {
	s := ""
	if secret != "" {
		s = "\n            secret: " + secret
	}
	return fmt.Sprintf(`
orgs:
  - slug: acme
    projects:
      - id: site
        webhooks:
          - name: main
            url: %q
            events: [%s]%s
`, url, strings.Join(events, ", "), s)
}

func start(t *testing.T, policy egress.Options, document string) *env {
	t.Helper()
	db, err := storetest.Open(t, store.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	ten, svc := open(t, db, egress.New(policy))
	applyDoc(t, ten, document)
	w := svc.NewWorker(webhooks.WorkerOptions{PollInterval: 10 * time.Millisecond, BaseBackoff: 10 * time.Millisecond,
		Shared: db.Backend() == store.BackendPostgres})
	if err := w.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Stop(context.Background()) })
	return &env{db: db, ten: ten, svc: svc, w: w}
}

func (e *env) emit(t *testing.T, evs ...webhooks.Event) {
	t.Helper()
	err := e.db.Update(context.Background(), func(txn *store.Txn) error {
		for _, ev := range evs {
			if err := e.svc.Enqueue(context.Background(), txn, ev); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("Enqueue: %v", err)
	}
}

// attempts waits until the deliveries log holds n attempts and returns them, newest first.
func (e *env) attempts(t *testing.T, n int) []webhooks.Attempt {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		got, _, err := e.svc.Attempts(context.Background(), "site", "main", "", 100)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) >= n || time.Now().After(deadline) {
			if len(got) != n {
				t.Fatalf("deliveries log holds %d attempts, want %d: %+v", len(got), n, got)
			}
			return got
		}
		time.Sleep(5 * time.Millisecond) // the log is written after the receiver answered
	}
}

func TestRetryUntil2xx(t *testing.T) {
	r := newReceiver(t, secret, 500)
	e := start(t, egress.Options{AllowPrivateNetworks: true}, doc(r.URL, secret, "form.submitted"))
	e.emit(t, webhooks.Event{Type: "form.submitted", Project: "site", Data: map[string]any{"form": "contact"}})
	first, second := r.next(t), r.next(t)
	if first.ID != second.ID || first.Type != "form.submitted" || first.Data["form"] != "contact" {
		t.Fatalf("attempts = %+v then %+v, want the same form.submitted delivery twice", first, second)
	}
	log := e.attempts(t, 2)
	if log[1].StatusCode != 500 || log[1].Outcome != "retrying" || log[1].NextAttemptAt == "" || log[1].Attempt != 1 {
		t.Errorf("first attempt = %+v, want 500 retrying", log[1])
	}
	if log[0].StatusCode != 200 || log[0].Outcome != "succeeded" || log[0].Attempt != 2 || log[0].DeliveryID != first.ID {
		t.Errorf("second attempt = %+v, want 200 succeeded", log[0])
	}
	select {
	case extra := <-r.got:
		t.Fatalf("a succeeded delivery came again: %+v", extra)
	default:
	}
}

func TestOnlySubscribedEventsAndOtherProjects(t *testing.T) {
	r := newReceiver(t, secret)
	e := start(t, egress.Options{AllowPrivateNetworks: true}, doc(r.URL, secret, "email.delivered"))
	e.emit(t,
		webhooks.Event{Type: "email.sent", Project: "site", Data: map[string]any{"id": "m1"}},
		webhooks.Event{Type: "email.delivered", Project: "other", Data: map[string]any{"id": "m1"}},
		webhooks.Event{Type: "email.delivered", Project: "site", Data: map[string]any{"id": "m2"}},
	)
	if got := r.next(t); got.Type != "email.delivered" || got.Data["id"] != "m2" {
		t.Fatalf("received %+v, want only site's email.delivered of m2", got)
	}
	e.attempts(t, 1)
	// An apply that changes the subscription drops the cached list at once.
	applyDoc(t, e.ten, doc(r.URL, secret, "email.sent"))
	for typ, want := range map[string]int{"email.delivered": 0, "email.sent": 1} {
		if b, err := e.svc.Prepare(context.Background(), webhooks.Event{Type: typ, Project: "site"}); err != nil || b.Len() != want {
			t.Errorf("after the re-apply Prepare(%s) = %d deliveries, %v; want %d", typ, b.Len(), err, want)
		}
	}
	e.emit(t,
		webhooks.Event{Type: "email.delivered", Project: "site", Data: map[string]any{"id": "m3"}},
		webhooks.Event{Type: "email.sent", Project: "site", Data: map[string]any{"id": "m3"}},
	)
	if got := r.next(t); got.Type != "email.sent" {
		t.Fatalf("after the re-apply received %+v, want only email.sent", got)
	}
	if err := e.db.Update(context.Background(), func(txn *store.Txn) error {
		return e.svc.Enqueue(context.Background(), txn, webhooks.Event{Type: "email.opened", Project: "site"})
	}); err == nil {
		t.Error("Enqueue(email.opened) succeeded, want ErrBadEvent")
	}
}

func TestOrderedPerMessage(t *testing.T) {
	// The first event of m1 fails twice; m1's later events wait for it, m2's do not.
	r := newReceiver(t, secret, 503, 503)
	e := start(t, egress.Options{AllowPrivateNetworks: true}, doc(r.URL, secret, "email.sent", "email.delivered", "email.bounced"))
	e.emit(t,
		webhooks.Event{Type: "email.sent", Project: "site", Order: "m1", Data: map[string]any{"id": "m1"}},
		webhooks.Event{Type: "email.delivered", Project: "site", Order: "m1", Data: map[string]any{"id": "m1"}},
		webhooks.Event{Type: "email.bounced", Project: "site", Order: "m1", Data: map[string]any{"id": "m1"}},
	)
	var m1 []string
	for len(m1) < 5 {
		got := r.next(t)
		m1 = append(m1, got.Type)
	}
	want := []string{"email.sent", "email.sent", "email.sent", "email.delivered", "email.bounced"}
	if strings.Join(m1, ",") != strings.Join(want, ",") {
		t.Fatalf("m1's events arrived as %v, want %v", m1, want)
	}
}

// The apply refuses a loopback endpoint (TestDocumentValidation), but an address can become
// private after the apply (a name re-resolving): deliveries check again when they connect.
// The policy here admits loopback while the document is applied, and refuses it afterwards.
func TestEgressRefusesLoopbackAtDelivery(t *testing.T) {
	r := newReceiver(t, secret)
	var applied atomic.Bool
	policy := egress.Options{AllowAddr: func(a netip.Addr) bool { return !applied.Load() && a.IsLoopback() }}
	e := start(t, policy, doc(r.URL, secret, "form.submitted"))
	applied.Store(true)
	e.emit(t, webhooks.Event{Type: "form.submitted", Project: "site", Data: map[string]any{}})
	// Refused dials are quick and the backoff here is 10 ms: read until at least one attempt
	// is logged (more may be) and check each.
	var log []webhooks.Attempt
	for deadline := time.Now().Add(20 * time.Second); len(log) == 0 && time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		var err error
		if log, _, err = e.svc.Attempts(context.Background(), "site", "main", "", 100); err != nil {
			t.Fatal(err)
		}
	}
	if len(log) == 0 {
		t.Fatal("no attempt logged")
	}
	for _, a := range log {
		if a.StatusCode != 0 || !strings.Contains(a.Error, "egress") || a.Outcome != "retrying" {
			t.Errorf("attempt to a loopback receiver = %+v, want refused by the egress policy", a)
		}
	}
	if res, err := e.svc.Ping(context.Background(), "site", "main"); err != nil || res.OK || !strings.Contains(res.Error, "egress") {
		t.Errorf("Ping(loopback) = %+v, %v; want refused", res, err)
	}
	select {
	case got := <-r.got:
		t.Fatalf("the loopback receiver was reached: %+v", got)
	default:
	}
}

func TestPingAndGeneratedSecret(t *testing.T) {
	// No secret in the document: the apply generates one and reports it once.
	db, err := storetest.Open(t, store.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ten, svc := open(t, db, egress.New(egress.Options{AllowPrivateNetworks: true}))
	first := applyDoc(t, ten, doc("https://hooks.example.com/in", "", "form.submitted"))
	if len(first.Secrets) != 1 || !strings.HasPrefix(first.Secrets[0].Value, "whsec_") || first.Secrets[0].Name != "main" {
		t.Fatalf("first apply generated %+v, want one whsec_ secret", first.Secrets)
	}
	gen := first.Secrets[0].Value
	again := applyDoc(t, ten, doc("https://hooks.example.com/in", "", "form.submitted"))
	if again.Changed || len(again.Secrets) != 0 {
		t.Fatalf("second apply = changed %v, generated %+v; want no change and no secret shown again", again.Changed, again.Secrets)
	}
	r := newReceiver(t, gen)
	applyDoc(t, ten, doc(r.URL, "", "form.submitted"))
	res, err := svc.Ping(context.Background(), "site", "main")
	if err != nil || !res.OK || res.StatusCode != 200 {
		t.Fatalf("Ping = %+v, %v; want 200", res, err)
	}
	if got := r.next(t); got.Type != "ping" || got.ID != res.ID {
		t.Fatalf("receiver got %+v, want the ping %s", got, res.ID)
	}
	log, _, err := svc.Attempts(context.Background(), "site", "main", "", 10)
	if err != nil || len(log) != 1 || log[0].Event != "ping" || log[0].StatusCode != 200 {
		t.Fatalf("Attempts after a ping = %+v, %v", log, err)
	}
	if _, err := svc.Ping(context.Background(), "site", "nope"); err != webhooks.ErrNotFound {
		t.Errorf("Ping(unknown webhook) = %v, want ErrNotFound", err)
	}

	// Rotation: a new secret in the document signs beside the old one for 24 hours, so a
	// receiver still holding either secret verifies.
	rotated := "whsec_" + strings.Repeat("QUJD", 8)
	applyDoc(t, ten, doc(r.URL, rotated, "form.submitted"))
	if res, err := svc.Ping(context.Background(), "site", "main"); err != nil || !res.OK {
		t.Fatalf("Ping after rotation, receiver with the old secret = %+v, %v", res, err)
	}
	r.next(t)
	r2 := newReceiver(t, rotated)
	applyDoc(t, ten, doc(r2.URL, rotated, "form.submitted"))
	if res, err := svc.Ping(context.Background(), "site", "main"); err != nil || !res.OK {
		t.Fatalf("Ping after rotation, receiver with the new secret = %+v, %v", res, err)
	}
	r2.next(t)
}

// open returns tenancy with the webhooks section registered, and the webhooks service.
func open(t *testing.T, db *store.DB, p *egress.Policy) (*tenancy.Service, *webhooks.Service) {
	t.Helper()
	ten, err := tenancy.NewService(tenancy.Options{DB: db})
	if err != nil {
		t.Fatal(err)
	}
	svc, err := webhooks.NewService(webhooks.Options{DB: db, Egress: p})
	if err != nil {
		t.Fatal(err)
	}
	if err := ten.Add(svc); err != nil {
		t.Fatal(err)
	}
	return ten, svc
}

func applyDoc(t *testing.T, ten *tenancy.Service, document string) *tenancy.Report {
	t.Helper()
	d, err := tenancy.Parse([]byte(document))
	if err != nil {
		t.Fatal(err)
	}
	rep, err := ten.Apply(context.Background(), d)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func TestDocumentValidation(t *testing.T) {
	db, err := storetest.Open(t, store.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ten, _ := open(t, db, egress.New(egress.Options{}))
	for _, tc := range []struct{ name, doc, path string }{
		{"bad url", doc("ftp://x.example.com/", "", "form.submitted"), "orgs[0].projects[0].webhooks[0].url"},
		{"credentials", doc("https://u:p@x.example.com/", "", "form.submitted"), "orgs[0].projects[0].webhooks[0].url"},
		{"unknown event", doc("https://x.example.com/", "", "form.created"), "orgs[0].projects[0].webhooks[0].events[0]"},
		{"bad secret", doc("https://x.example.com/", "whsec_short", "form.submitted"), "orgs[0].projects[0].webhooks[0].secret"},
		{"loopback literal", doc("http://127.0.0.1:8080/in", "", "form.submitted"), "orgs[0].projects[0].webhooks[0].url"},
		{"IPv6 loopback", doc("http://[::1]/in", "", "form.submitted"), "orgs[0].projects[0].webhooks[0].url"},
		{"private literal", doc("https://10.1.2.3/in", "", "form.submitted"), "orgs[0].projects[0].webhooks[0].url"},
		{"metadata address", doc("http://169.254.169.254/latest", "", "form.submitted"), "orgs[0].projects[0].webhooks[0].url"},
		{"mapped loopback", doc("http://[::ffff:127.0.0.1]/in", "", "form.submitted"), "orgs[0].projects[0].webhooks[0].url"},
		{"name resolving to loopback", doc("http://localhost:8080/in", "", "form.submitted"), "orgs[0].projects[0].webhooks[0].url"},
	} {
		d, err := tenancy.Parse([]byte(tc.doc))
		if err == nil {
			err = ten.Validate(d)
		}
		if err == nil || !strings.Contains(err.Error(), tc.path) {
			t.Errorf("%s: Validate = %v, want a problem at %s", tc.name, err, tc.path)
		}
	}
}

// With egress.allow_private_networks the same endpoints are accepted at apply.
func TestPrivateEndpointsAllowedWhenEgressAllows(t *testing.T) {
	db, err := store.Open(store.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ten, _ := open(t, db, egress.New(egress.Options{AllowPrivateNetworks: true}))
	for _, u := range []string{"http://127.0.0.1:8080/in", "http://[::1]/in", "https://10.1.2.3/in", "http://localhost:8080/in"} {
		d, err := tenancy.Parse([]byte(doc(u, "", "form.submitted")))
		if err == nil {
			err = ten.Validate(d)
		}
		if err != nil {
			t.Errorf("Validate(webhook to %s) with private networks allowed = %v, want accepted", u, err)
		}
	}
}
