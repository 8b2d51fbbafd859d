package webhooks_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gofiber/fiber/v2"

	"github.com/gatehouse-dev/gatehouse/edge/cursor"
	"github.com/gatehouse-dev/gatehouse/edge/edgetest/storetest"
	"github.com/gatehouse-dev/gatehouse/edge/egress"
	"github.com/gatehouse-dev/gatehouse/edge/httpx"
	"github.com/gatehouse-dev/gatehouse/edge/store"
	"github.com/gatehouse-dev/gatehouse/edge/tenancy"
	"github.com/gatehouse-dev/gatehouse/edge/webhooks"
)

// TestAdminPutAndDelete drives PUT and DELETE /projects/{project}/webhooks/{name} through the
// admin routes over a real store: create (a secret generated and shown once), replace (kept),
// field-level validation errors, an unknown project, and removal.
func TestAdminPutAndDelete(t *testing.T) {
	db, err := storetest.Open(t, store.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ten, err := tenancy.NewService(tenancy.Options{DB: db})
	if err != nil {
		t.Fatal(err)
	}
	svc, err := webhooks.NewService(webhooks.Options{DB: db, Egress: egress.New(egress.Options{}), Tenancy: ten})
	if err != nil {
		t.Fatal(err)
	}
	if err := ten.Add(svc); err != nil {
		t.Fatal(err)
	}
	applyDoc(t, ten, doc("https://hooks.example.com/in", secret, "form.submitted"))
	cur, err := cursor.NewCursors(bytes.Repeat([]byte{7}, 32))
	if err != nil {
		t.Fatal(err)
	}
	app := fiber.New(fiber.Config{ErrorHandler: httpx.ErrorHandler(slog.New(slog.DiscardHandler))})
	webhooks.NewAPI(svc, cur).MountAdmin(app)
	call := func(method, path, body string) (int, map[string]any) {
		t.Helper()
		req := httptest.NewRequest(method, path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		res, err := app.Test(req, -1)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := io.ReadAll(res.Body)
		var out map[string]any
		_ = json.Unmarshal(raw, &out)
		return res.StatusCode, out
	}

	code, out := call("PUT", "/projects/site/webhooks/crm", `{"url":"https://crm.example.com/in","events":["form.submitted","email.bounced"]}`)
	gen, _ := out["secret"].(string)
	if code != 201 || !strings.HasPrefix(gen, "whsec_") || out["url"] != "https://crm.example.com/in" {
		t.Fatalf("PUT new = %d %v; want 201 with a generated secret", code, out)
	}
	code, out = call("PUT", "/projects/site/webhooks/crm", `{"url":"https://crm.example.com/v2","events":["email.bounced"]}`)
	if code != 200 || out["secret"] != nil {
		t.Fatalf("PUT again = %d %v; want 200 and no secret shown", code, out)
	}
	list, err := svc.List(context.Background(), "site")
	if err != nil || len(list) != 2 || list[0].Name != "crm" || list[0].URL != "https://crm.example.com/v2" || len(list[0].Events) != 1 {
		t.Fatalf("List after PUT = %+v, %v", list, err)
	}
	// The secret was kept by the replacement: a ping is signed with it (the generated one).
	if _, err := svc.Ping(context.Background(), "site", "crm"); err != nil {
		t.Fatalf("Ping(crm) = %v", err)
	}

	for _, tc := range []struct{ name, path, body, field string }{
		{"bad url", "/projects/site/webhooks/x", `{"url":"ftp://x.example.com","events":["form.submitted"]}`, "url"},
		{"loopback", "/projects/site/webhooks/x", `{"url":"http://127.0.0.1/in","events":["form.submitted"]}`, "url"},
		{"unknown event", "/projects/site/webhooks/x", `{"url":"https://x.example.com","events":["form.created"]}`, "events[0]"},
		{"no events", "/projects/site/webhooks/x", `{"url":"https://x.example.com"}`, "events"},
		{"bad secret", "/projects/site/webhooks/x", `{"url":"https://x.example.com","events":["form.submitted"],"secret":"whsec_x"}`, "secret"},
		{"bad name", "/projects/site/webhooks/a%20b", `{"url":"https://x.example.com","events":["form.submitted"]}`, "name"},
	} {
		code, out := call("PUT", tc.path, tc.body)
		details, _ := out["details"].([]any)
		first, _ := func() (map[string]any, bool) {
			if len(details) == 0 {
				return nil, false
			}
			m, ok := details[0].(map[string]any)
			return m, ok
		}()
		if code != 400 || out["error"] != "VALIDATION_FAILED" || first["field"] != tc.field {
			t.Errorf("%s: PUT = %d %v; want 400 VALIDATION_FAILED on %s", tc.name, code, out, tc.field)
		}
	}
	if code, out := call("PUT", "/projects/nope/webhooks/x", `{"url":"https://x.example.com","events":["form.submitted"]}`); code != 404 {
		t.Errorf("PUT in an unknown project = %d %v; want 404", code, out)
	}

	if code, out := call("DELETE", "/projects/site/webhooks/crm", ""); code != 204 {
		t.Fatalf("DELETE = %d %v; want 204", code, out)
	}
	if code, _ := call("DELETE", "/projects/site/webhooks/crm", ""); code != 404 {
		t.Errorf("DELETE again = %d; want 404", code)
	}
	if _, err := svc.Ping(context.Background(), "site", "crm"); err != webhooks.ErrNotFound {
		t.Errorf("Ping(deleted) = %v; want ErrNotFound", err)
	}
	if list, _ := svc.List(context.Background(), "site"); len(list) != 1 || list[0].Name != "main" {
		t.Errorf("List after DELETE = %+v; want main alone", list)
	}
}
