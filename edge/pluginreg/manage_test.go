package pluginreg_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gofiber/fiber/v2"

	"github.com/gatehouse-dev/gatehouse/edge/edgetest/storetest"
	"github.com/gatehouse-dev/gatehouse/edge/httpx"
	"github.com/gatehouse-dev/gatehouse/edge/journal"
	"github.com/gatehouse-dev/gatehouse/edge/pluginreg"
	"github.com/gatehouse-dev/gatehouse/edge/store"
	"github.com/gatehouse-dev/gatehouse/edge/tenancy"
)

// TestModulesAttachDetach lists an uploaded module through GET .../plugin-modules, attaches it
// to a hook with PUT .../plugins/{name}, sees the hook on the module, refuses invalid
// registrations field by field, and detaches it with DELETE, over a real store.
func TestModulesAttachDetach(t *testing.T) {
	ctx := context.Background()
	db, err := storetest.Open(t, store.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ten, err := tenancy.NewService(tenancy.Options{DB: db})
	if err != nil {
		t.Fatal(err)
	}
	reg := pluginreg.New(pluginreg.Options{DB: db, Tenancy: ten})
	if err := ten.Add(reg); err != nil {
		t.Fatal(err)
	}
	d, err := tenancy.Parse([]byte("orgs:\n  - slug: acme\n    projects:\n      - id: site\n"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ten.Apply(ctx, d); err != nil {
		t.Fatal(err)
	}
	var heard []journal.Change
	ten.OnChange(func(_ context.Context, cs []journal.Change) { heard = append(heard, cs...) })
	module := []byte("\x00asm\x01\x00\x00\x00")
	if err := reg.PutModule(ctx, "site", "guard", module); err != nil {
		t.Fatal(err)
	}
	app := fiber.New(fiber.Config{ErrorHandler: httpx.ErrorHandler(slog.New(slog.DiscardHandler))})
	reg.MountAdmin(app)
	call := func(method, path, body string, out any) int {
		t.Helper()
		req := httptest.NewRequest(method, path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		res, err := app.Test(req, -1)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := io.ReadAll(res.Body)
		if out != nil {
			_ = json.Unmarshal(raw, out)
		}
		return res.StatusCode
	}
	type list struct{ Items []pluginreg.ModuleInfo }
	var l list
	if code := call("GET", "/projects/site/plugin-modules", "", &l); code != 200 || len(l.Items) != 1 {
		t.Fatalf("GET plugin-modules = %d %+v", code, l)
	}
	m := l.Items[0]
	if m.Name != "guard" || m.Size != len(module) || len(m.SHA256) != 64 || m.UploadedAt == "" || len(m.Plugins) != 0 || len(m.Hooks) != 0 {
		t.Fatalf("module = %+v; want guard, its size, digest and upload time, attached to nothing", m)
	}

	if code := call("PUT", "/projects/site/plugins/guard", `{"module":"guard","hooks":["forms.submit"]}`, nil); code != 201 {
		t.Fatalf("PUT (attach) = %d; want 201", code)
	}
	if code := call("PUT", "/projects/site/plugins/guard", `{"module":"guard","hooks":["forms.submit","records.read"]}`, nil); code != 200 {
		t.Fatalf("PUT (a second hook) = %d; want 200", code)
	}
	if code := call("GET", "/projects/site/plugin-modules", "", &l); code != 200 || len(l.Items) != 1 ||
		strings.Join(l.Items[0].Hooks, ",") != "forms.submit,records.read" || strings.Join(l.Items[0].Plugins, ",") != "guard" {
		t.Fatalf("after attaching: %d %+v", code, l)
	}
	if ps, err := reg.Plugins(ctx, "site"); err != nil || len(ps) != 1 || ps[0].Module != "guard" {
		t.Fatalf("Plugins = %+v, %v", ps, err)
	}
	if len(heard) == 0 || heard[len(heard)-1].Kind != "plugin" || heard[len(heard)-1].Name != "guard" {
		t.Errorf("changes heard = %+v; want the plugin's (the host syncs on them)", heard)
	}

	for _, tc := range []struct{ name, path, body, field string }{
		{"unknown hook", "/projects/site/plugins/guard", `{"module":"guard","hooks":["forms.read"]}`, "hooks[0]"},
		{"no hooks", "/projects/site/plugins/guard", `{"module":"guard"}`, "hooks"},
		{"no module", "/projects/site/plugins/guard", `{"hooks":["forms.submit"]}`, "module"},
		{"onError", "/projects/site/plugins/guard", `{"module":"guard","hooks":["forms.submit"],"onError":"maybe"}`, "onError"},
		{"bad name", "/projects/site/plugins/a%20b", `{"module":"guard","hooks":["forms.submit"]}`, "name"},
	} {
		var e struct {
			Error   string
			Details []struct{ Field string }
		}
		code := call("PUT", tc.path, tc.body, &e)
		if code != 400 || e.Error != "VALIDATION_FAILED" || len(e.Details) == 0 || e.Details[0].Field != tc.field {
			t.Errorf("%s: PUT = %d %+v; want 400 VALIDATION_FAILED on %s", tc.name, code, e, tc.field)
		}
	}
	if code := call("PUT", "/projects/nope/plugins/guard", `{"module":"guard","hooks":["forms.submit"]}`, nil); code != 404 {
		t.Errorf("PUT in an unknown project = %d; want 404", code)
	}
	if code := call("GET", "/projects/nope/plugin-modules", "", nil); code != 404 {
		t.Errorf("GET plugin-modules of an unknown project = %d; want 404", code)
	}

	// One hook at a time: detach records.read, then forms.submit (the registration goes with
	// its last hook), attach forms.submit again (created), and remove the whole registration.
	if code := call("DELETE", "/projects/site/plugins/guard/hooks/records.read", "", nil); code != 204 {
		t.Fatalf("DELETE .../hooks/records.read = %d; want 204", code)
	}
	if ps, _ := reg.Plugins(ctx, "site"); len(ps) != 1 || strings.Join(ps[0].Hooks, ",") != "forms.submit" {
		t.Fatalf("after detaching records.read: %+v", ps)
	}
	if code := call("DELETE", "/projects/site/plugins/guard/hooks/forms.submit", "", nil); code != 204 {
		t.Fatalf("DELETE .../hooks/forms.submit = %d; want 204", code)
	}
	if ps, _ := reg.Plugins(ctx, "site"); len(ps) != 0 {
		t.Fatalf("after detaching the last hook: %+v; want no registration", ps)
	}
	var p pluginreg.Plugin
	if code := call("POST", "/projects/site/plugins/guard/hooks", `{"hook":"forms.submit"}`, &p); code != 200 || p.Module != "guard" || strings.Join(p.Hooks, ",") != "forms.submit" {
		t.Fatalf("POST .../hooks = %d %+v; want the registration running guard at forms.submit", code, p)
	}
	if code := call("POST", "/projects/site/plugins/guard/hooks", `{"hook":"forms.read"}`, nil); code != 400 {
		t.Errorf("attach to an unknown hook = %d; want 400", code)
	}
	if code := call("DELETE", "/projects/site/plugins/nope/hooks/forms.submit", "", nil); code != 404 {
		t.Errorf("detach from no registration = %d; want 404", code)
	}
	if code := call("DELETE", "/projects/site/plugins/guard", "", nil); code != 204 {
		t.Fatalf("DELETE (the registration) = %d; want 204", code)
	}
	if code := call("DELETE", "/projects/site/plugins/guard", "", nil); code != 404 {
		t.Errorf("DELETE again = %d; want 404", code)
	}
	if code := call("GET", "/projects/site/plugin-modules", "", &l); code != 200 || len(l.Items) != 1 || len(l.Items[0].Hooks) != 0 {
		t.Fatalf("after detaching: %d %+v; want the module kept, attached to nothing", code, l)
	}
}
