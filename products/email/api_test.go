package email_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/edge/edgetest"
	"github.com/gatehouse-dev/gatehouse/products/email"
)

func TestSendErrors(t *testing.T) {
	t.Parallel()
	e := start(t, envOptions{outbox: true})
	const path = "/email/notifications/send"
	inline := map[string]any{"to": map[string]any{"email": "a@example.com"}, "subject": "Hi", "bodyText": "Hello"}
	with := func(k string, v any) map[string]any {
		m := map[string]any{}
		for kk, vv := range inline {
			m[kk] = vv
		}
		if v == nil {
			delete(m, k)
		} else {
			m[k] = v
		}
		return m
	}
	sk := "sk_live_demo_server"
	e.Run(t, []edgetest.Scenario{
		{Name: "no key", Method: "POST", Path: path, Body: inline, Status: 401, Code: "-"},
		{Name: "bad key", Method: "POST", Path: path, Key: "sk_live_nope", Body: inline, Status: 401, Code: "-"},
		{Name: "publishable key", Method: "POST", Path: path, Key: "pk_live_demo_web", Body: inline, Status: 403, Code: "SECRET_KEY_REQUIRED"},
		{Name: "key without email", Method: "POST", Path: path, Key: "sk_live_demo_files", Body: inline, Status: 403, Code: "FORBIDDEN"},
		{Name: "inline ok", Method: "POST", Path: path, Key: sk, Body: inline, Status: 202},
		{Name: "template ok", Method: "POST", Path: path, Key: sk, Body: welcome("b@example.com"), Status: 202},
		{Name: "not json", Method: "POST", Path: path, Key: sk, Body: "{nope", Status: 400, Code: "VALIDATION_FAILED"},
		{Name: "unknown field", Method: "POST", Path: path, Key: sk, Body: with("cc", "x@example.com"), Status: 400, Code: "VALIDATION_FAILED"},
		{Name: "no to", Method: "POST", Path: path, Key: sk, Body: with("to", nil), Status: 400, Code: "VALIDATION_FAILED"},
		{Name: "bad to", Method: "POST", Path: path, Key: sk, Body: with("to", map[string]any{"email": "not an address"}), Status: 400, Code: "VALIDATION_FAILED"},
		{Name: "bad from", Method: "POST", Path: path, Key: sk, Body: with("from", map[string]any{"email": "x@y@z"}), Status: 400, Code: "VALIDATION_FAILED"},
		{Name: "neither template nor inline", Method: "POST", Path: path, Key: sk, Body: map[string]any{"to": map[string]any{"email": "a@example.com"}}, Status: 400, Code: "VALIDATION_FAILED"},
		{Name: "both template and inline", Method: "POST", Path: path, Key: sk, Body: with("templateId", "welcome"), Status: 400, Code: "VALIDATION_FAILED"},
		{Name: "inline without body", Method: "POST", Path: path, Key: sk, Body: with("bodyText", nil), Status: 400, Code: "VALIDATION_FAILED"},
		{Name: "inline without subject", Method: "POST", Path: path, Key: sk, Body: with("subject", nil), Status: 400, Code: "VALIDATION_FAILED"},
		{Name: "unknown template", Method: "POST", Path: path, Key: sk, Body: map[string]any{"to": map[string]any{"email": "a@example.com"}, "templateId": "nope"}, Status: 404, Code: "TEMPLATE_NOT_FOUND"},
		{Name: "missing variable", Method: "POST", Path: path, Key: sk, Body: map[string]any{"to": map[string]any{"email": "a@example.com"}, "templateId": "plain"}, Status: 400, Code: "VALIDATION_FAILED"},
		{Name: "object variable", Method: "POST", Path: path, Key: sk, Body: map[string]any{"to": map[string]any{"email": "a@example.com"}, "templateId": "plain", "variables": map[string]any{"name": map[string]any{"x": 1}}}, Status: 400, Code: "VALIDATION_FAILED"},
		{Name: "null variable", Method: "POST", Path: path, Key: sk, Body: `{"to":{"email":"a@example.com"},"templateId":"plain","variables":{"name":null}}`, Status: 400, Code: "VALIDATION_FAILED"},
		{Name: "metadata not string", Method: "POST", Path: path, Key: sk, Body: with("metadata", map[string]any{"n": 1}), Status: 400, Code: "VALIDATION_FAILED"},
		{Name: "tag with slash", Method: "POST", Path: path, Key: sk, Body: with("tags", []string{"a/b"}), Status: 400, Code: "VALIDATION_FAILED"},
		{Name: "own projectId", Method: "POST", Path: path, Key: sk, Body: with("projectId", "demo"), Status: 202},
		{Name: "other projectId", Method: "POST", Path: path, Key: sk, Body: with("projectId", "other"), Status: 403, Code: "FORBIDDEN"},
		{Name: "org key without projectId", Method: "POST", Path: path, Key: "sk_live_acme_org_email", Body: inline, Status: 400, Code: "VALIDATION_FAILED"},
		{Name: "org key with its project", Method: "POST", Path: path, Key: "sk_live_acme_org_email", Body: with("projectId", "other"), Status: 202},
		{Name: "org key with foreign project", Method: "POST", Path: path, Key: "sk_live_acme_org_email", Body: with("projectId", "globex-site"), Status: 404, Code: "PROJECT_NOT_FOUND"},
		{Name: "org key with unknown project", Method: "POST", Path: path, Key: "sk_live_acme_org_email", Body: with("projectId", "nope"), Status: 404, Code: "PROJECT_NOT_FOUND"},
		{Name: "idempotency key too long", Method: "POST", Path: path, Key: sk, Body: inline, Headers: []string{"Idempotency-Key", strings.Repeat("k", 300)}, Status: 400, Code: "VALIDATION_FAILED"},
	})
	t.Run("too large", func(t *testing.T) {
		// Over a raw connection: the server answers 413 from the declared length and closes,
		// which an HTTP client still writing the body may see as a reset instead.
		conn, err := net.Dial("tcp", strings.TrimPrefix(e.URL, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
		fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: x\r\nX-API-Key: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", path, sk, email.MaxBodyBytes+len(`{"to":{"email":"a@example.com"},"subject":"s","bodyText":""}`))
		go func() { // the whole body, in the background: the write may fail once the server closes
			_, _ = conn.Write([]byte(`{"to":{"email":"a@example.com"},"subject":"s","bodyText":"` + strings.Repeat("x", email.MaxBodyBytes) + `"}`))
		}()
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatalf("reading the answer to an oversized send: %v", err)
		}
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 413 || strings.Contains(string(body), `"error"`) {
			t.Errorf("oversized send = %d %s, want 413 without an error code", resp.StatusCode, body)
		}
	})
	t.Run("no CORS on the secret route", func(t *testing.T) {
		r := e.Do("POST", path, inline, "X-API-Key", sk, "Origin", "https://evil.example")
		if got := r.Header.Get("Access-Control-Allow-Origin"); got != "" {
			t.Errorf("Access-Control-Allow-Origin = %q, want none", got)
		}
	})
	t.Run("validation details name the field", func(t *testing.T) {
		r := e.Do("POST", path, map[string]any{"to": map[string]any{"email": "a@example.com"}, "templateId": "welcome", "variables": map[string]any{"name": "x"}}, "X-API-Key", sk)
		if r.Status != 400 || !strings.Contains(string(r.Body), "variables.product") || !strings.Contains(string(r.Body), "variables.count") {
			t.Errorf("missing variables: %d %s, want 400 naming variables.product and variables.count", r.Status, r.Body)
		}
	})
}

func TestAdminRoutes(t *testing.T) {
	t.Parallel()
	e := start(t, envOptions{outbox: true})
	var ids []string
	for i := 0; i < 5; i++ {
		b := welcome("list@example.com")
		if i%2 == 0 {
			b["tags"] = []string{"even"}
		}
		ids = append(ids, e.send(t, b))
	}
	for _, id := range ids {
		e.waitStatus(t, id, "delivered")
	}
	e.Run(t, []edgetest.Scenario{
		{Name: "no token", Method: "GET", Path: "/admin/v1/email/messages", Status: 401},
		{Name: "unknown message", Method: "GET", Path: "/admin/v1/email/messages/msg_01jzzzzzzzzzzzzzzzzzzzzzzz", Headers: []string{"Authorization", "Bearer " + edgetest.AdminToken}, Status: 404, Code: "MESSAGE_NOT_FOUND"},
		{Name: "malformed id", Method: "GET", Path: "/admin/v1/email/messages/nope", Headers: []string{"Authorization", "Bearer " + edgetest.AdminToken}, Status: 404, Code: "MESSAGE_NOT_FOUND"},
		{Name: "bad status filter", Method: "GET", Path: "/admin/v1/email/messages?status=lost", Headers: []string{"Authorization", "Bearer " + edgetest.AdminToken}, Status: 400, Code: "VALIDATION_FAILED"},
		{Name: "forged cursor", Method: "GET", Path: "/admin/v1/email/messages?cursor=AAAAAAAAAAAAAAAAAAAAAAAAAAAA", Headers: []string{"Authorization", "Bearer " + edgetest.AdminToken}, Status: 400, Code: "INVALID_CURSOR"},
	})
	r := e.Admin("GET", "/email/messages/"+ids[0], nil)
	if r.Status != 200 {
		t.Fatalf("GET message = %d %s", r.Status, r.Body)
	}
	m := r.JSON(t)
	if m["status"] != "delivered" || m["id"] != ids[0] {
		t.Errorf("GET message = %v", m)
	}
	if log, _ := m["log"].([]any); len(log) != 3 {
		t.Errorf("log = %v, want queued, sent, delivered", m["log"])
	}
	// Pages of 2, newest first, filtered by tag.
	var got []string
	cursor := ""
	for page := 0; page < 5; page++ {
		p := "/email/messages?tag=even&limit=2"
		if cursor != "" {
			p += "&cursor=" + cursor
		}
		r := e.Admin("GET", p, nil)
		if r.Status != 200 {
			t.Fatalf("GET %s = %d %s", p, r.Status, r.Body)
		}
		body := r.JSON(t)
		for _, it := range body["items"].([]any) {
			got = append(got, it.(map[string]any)["id"].(string))
		}
		next, _ := body["pagination"].(map[string]any)["nextCursor"].(string)
		if next == "" {
			break
		}
		cursor = next
	}
	want := []string{ids[4], ids[2], ids[0]}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("tag=even pages = %v, want %v", got, want)
	}
	r = e.Admin("GET", "/email/messages?status=delivered&limit=100", nil)
	if n := len(r.JSON(t)["items"].([]any)); n != 5 {
		t.Errorf("status=delivered: %d items, want 5", n)
	}
	r = e.Admin("GET", "/email/messages?status=queued", nil)
	if n := len(r.JSON(t)["items"].([]any)); n != 0 {
		t.Errorf("status=queued: %d items, want 0", n)
	}
	// A cursor of one filter is refused by another.
	r = e.Admin("GET", "/email/messages?tag=even&limit=1", nil)
	next := r.JSON(t)["pagination"].(map[string]any)["nextCursor"].(string)
	if r := e.Admin("GET", "/email/messages?tag=beta&cursor="+next, nil); r.Status != 400 || r.Code() != "INVALID_CURSOR" {
		t.Errorf("foreign cursor = %d %s, want 400 INVALID_CURSOR", r.Status, r.Body)
	}
}

// TestSendDecodeErrorsHaveDetails: a body that does not decode is 400 VALIDATION_FAILED with
// details naming the field (decisions.md section 2), and no Go type names leak into the answer.
func TestSendDecodeErrorsHaveDetails(t *testing.T) {
	t.Parallel()
	e := start(t, envOptions{outbox: true})
	const path = "/email/notifications/send"
	cases := []struct {
		name, body, field string
	}{
		{"truncated JSON", `{"to":{"email":"a@example.com"},`, "body"},
		{"not JSON", `{nope`, "body"},
		{"array body", `[1,2]`, "body"},
		{"two objects", `{"to":{"email":"a@example.com"},"subject":"s","bodyText":"b"} {}`, "body"},
		{"to as string", `{"to":"a@example.com","subject":"s","bodyText":"b"}`, "to"},
		{"metadata number", `{"to":{"email":"a@example.com"},"subject":"s","bodyText":"b","metadata":{"n":1}}`, "metadata"},
		{"tags as string", `{"to":{"email":"a@example.com"},"subject":"s","bodyText":"b","tags":"x"}`, "tags"},
		{"unknown field", `{"to":{"email":"a@example.com"},"subject":"s","bodyText":"b","cc":"x"}`, "cc"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := e.Do("POST", path, tc.body, "X-API-Key", "sk_live_demo_server")
			var got struct {
				Error   string `json:"error"`
				Message string `json:"message"`
				Details []struct {
					Field   string `json:"field"`
					Problem string `json:"problem"`
				} `json:"details"`
			}
			if err := json.Unmarshal(r.Body, &got); err != nil {
				t.Fatalf("POST %s (%s): body %s: %v", path, tc.name, r.Body, err)
			}
			if r.Status != 400 || got.Error != "VALIDATION_FAILED" {
				t.Errorf("POST %s (%s) = %d %s, want 400 VALIDATION_FAILED", path, tc.name, r.Status, r.Body)
			}
			if len(got.Details) != 1 || got.Details[0].Field != tc.field || got.Details[0].Problem == "" {
				t.Errorf("POST %s (%s): details %+v, want one problem for field %q", path, tc.name, got.Details, tc.field)
			}
			for _, leak := range []string{"Go struct", "tenancy.", "SendRequest", "unmarshal"} {
				if strings.Contains(string(r.Body), leak) {
					t.Errorf("POST %s (%s): body %s leaks %q", path, tc.name, r.Body, leak)
				}
			}
		})
	}
}
