package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

// multinodeWebhooks is the project's webhooks section of the multi-node tenants document: one
// webhook to the cluster's receiver, for the events the nodes' forms and email workers make.
const multinodeWebhooks = `        webhooks:
          - name: hooks
            url: %q
            events: [form.submitted, email.delivered]
            secret: %s
`

// clusterReceiver is the cluster's webhook receiver: it verifies every request with the
// Standard Webhooks library, answers 200, and counts the requests per webhook-id and the
// webhook-ids per event subject (the submission or message id in the event's data).
type clusterReceiver struct {
	*httptest.Server
	mu      sync.Mutex
	byID    map[string]int
	subject map[string]map[string]bool // data.id -> webhook-ids
	bad     []string
}

func newClusterReceiver(t *testing.T) *clusterReceiver {
	t.Helper()
	wh, err := standardwebhooks.NewWebhook(hookSecret)
	if err != nil {
		t.Fatal(err)
	}
	r := &clusterReceiver{byID: map[string]int{}, subject: map[string]map[string]bool{}}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		raw, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		defer r.mu.Unlock()
		if err := wh.Verify(raw, req.Header); err != nil {
			r.bad = append(r.bad, err.Error())
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		var b struct {
			Type string `json:"type"`
			Data struct {
				ID string `json:"id"`
			} `json:"data"`
		}
		_ = json.Unmarshal(raw, &b)
		id := req.Header.Get("webhook-id")
		r.byID[id]++
		key := b.Type + " " + b.Data.ID
		if r.subject[key] == nil {
			r.subject[key] = map[string]bool{}
		}
		r.subject[key][id] = true
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(r.Close)
	return r
}

// got returns how many requests the event typ about subject (a submission or message id)
// reached the receiver in (0 when none yet); an event is one webhook-id.
func (r *clusterReceiver) got(typ, subject string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for id := range r.subject[typ+" "+subject] {
		n += r.byID[id]
	}
	return n
}

// check fails t on a refused signature or an event queued twice for one subject, and with
// once on an event (a webhook-id) received more than once.
func (r *clusterReceiver) check(t *testing.T, once bool) {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.bad) > 0 {
		t.Errorf("the receiver refused %d signatures, first: %s", len(r.bad), r.bad[0])
	}
	for id, n := range r.byID {
		if once && n != 1 {
			t.Errorf("webhook %s received %d times, want once", id, n)
		}
	}
	for key, ids := range r.subject {
		if len(ids) != 1 {
			t.Errorf("%s came as %d events, want 1", key, len(ids))
		}
	}
}

// Events made on every node (form submissions through each, and the email.delivered of
// messages the nodes' workers deliver) reach the receiver once each, with valid signatures,
// and the deliveries log, read through any node, holds one succeeded attempt per event. Every
// event of the earlier subtests too came once, across the stop and restart of a node
// (TitleSearchOnEveryNode): a node stopped gracefully releases no attempt it started.
func (c *cluster) webhooksDeliveredOnce(t *testing.T) {
	c.t = t
	const subs, sends = 9, 9
	var events [][2]string
	for n := 0; n < subs; n++ {
		var sub struct{ ID string }
		c.must(n%len(c.nodes), "POST", "/forms/forms/contact/submit", "pk_live_multi_web", fmt.Sprintf(`{"msg":"hook %d"}`, n), 201, &sub)
		events = append(events, [2]string{"form.submitted", sub.ID})
	}
	for n := 0; n < sends; n++ {
		var m struct{ ID string }
		c.must(n%len(c.nodes), "POST", "/email/notifications/send", "sk_live_multi_server", fmt.Sprintf(`{"to":{"email":"hook%d@example.com"},"subject":"hook %d","bodyText":"hi"}`, n, n), 202, &m)
		events = append(events, [2]string{"email.delivered", m.ID})
	}
	for _, e := range events {
		await(t, e[0]+" of "+e[1]+" received", func() bool { return c.hooks.got(e[0], e[1]) > 0 })
	}
	for _, e := range events {
		if n := c.hooks.got(e[0], e[1]); n != 1 {
			t.Errorf("%s of %s reached the receiver %d times, want once", e[0], e[1], n)
		}
	}
	c.hooks.check(t, true)
	// Each event's one attempt is in the log, whichever node made it.
	want := map[string]bool{}
	c.hooks.mu.Lock()
	for _, e := range events {
		for id := range c.hooks.subject[e[0]+" "+e[1]] {
			want[id] = true
		}
	}
	c.hooks.mu.Unlock()
	// The receiver answers before the worker records the attempt: wait until the log holds
	// every one, then check that each is there once, through every node.
	await(t, "every attempt logged", func() bool {
		logged := c.loggedAttempts(t, 0, want)
		return len(logged) == len(want)
	})
	for i := range c.nodes {
		logged := c.loggedAttempts(t, i, want)
		for id := range want {
			if logged[id] != 1 {
				t.Errorf("node %d logs %d attempts of delivery %s, want 1", i, logged[id], id)
			}
		}
	}
}

// loggedAttempts counts the attempts of the wanted deliveries in the deliveries log read
// through node i, failing the test for one that did not succeed.
func (c *cluster) loggedAttempts(t *testing.T, i int, want map[string]bool) map[string]int {
	logged := map[string]int{}
	path := "/admin/v1/projects/site/webhooks/hooks/deliveries?limit=200"
	for path != "" {
		var page struct {
			Items []struct {
				DeliveryID, Outcome string
			}
			Pagination struct{ NextCursor *string }
		}
		c.must(i, "GET", path, "admin", "", 200, &page)
		for _, a := range page.Items {
			if want[a.DeliveryID] {
				logged[a.DeliveryID]++
				if a.Outcome != "succeeded" {
					t.Errorf("node %d logs delivery %s as %s, want succeeded", i, a.DeliveryID, a.Outcome)
				}
			}
		}
		path = ""
		if page.Pagination.NextCursor != nil {
			path = "/admin/v1/projects/site/webhooks/hooks/deliveries?limit=200&cursor=" + url.QueryEscape(*page.Pagination.NextCursor)
		}
	}
	return logged
}
