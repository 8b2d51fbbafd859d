package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestHelpExitsZero: --help of serve and keys (and the others) prints the flags and the
// environment variables to standard output and exits 0.
func TestHelpExitsZero(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"serve", "--help"}, []string{"-listen", "-config", "-tenants", "GATEHOUSE_LISTEN", "GATEHOUSE_PUBLIC_URL", "GATEHOUSE_EMAIL_SMTP_PORT", "GATEHOUSE_ADMIN_TOKEN"}},
		{[]string{"serve", "-h"}, []string{"-listen", "GATEHOUSE_DATA"}},
		{[]string{"keys", "--help"}, []string{"keys create", "keys revoke", "-org", "-products", "-kind", "-server", "GATEHOUSE_SERVER", "GATEHOUSE_ADMIN_TOKEN"}},
		{[]string{"keys", "create", "--help"}, []string{"-org", "GATEHOUSE_ADMIN_TOKEN"}},
		{[]string{"apply", "--help"}, []string{"-f", "GATEHOUSE_SERVER"}},
		{[]string{"records", "--help"}, []string{"-collection", "GATEHOUSE_SERVER"}},
		{[]string{"records", "import", "--help"}, []string{"-project", "-skip", "Exit status 0 when every line is stored"}},
		{[]string{"plugins", "--help"}, []string{"plugins run MODULE", "plugins init DIR"}},
		{[]string{"plugins", "run", "--help"}, []string{"-hook", "-input"}},
		{[]string{"plugins", "init", "--help"}, []string{"-hook"}},
		{[]string{"migrate", "--help"}, []string{"-from", "-to", "GATEHOUSE_STORAGE_POSTGRES_URL"}},
	} {
		var out, errOut bytes.Buffer
		code := run(context.Background(), tc.args, &out, &errOut, []string{"GATEHOUSE_ADMIN_TOKEN=never-printed"})
		if code != 0 {
			t.Errorf("gatehouse %s: exit %d, want 0 (stderr %q)", strings.Join(tc.args, " "), code, errOut.String())
		}
		if strings.Contains(out.String(), "never-printed") {
			t.Errorf("gatehouse %s: --help prints the admin token", strings.Join(tc.args, " "))
		}
		for _, w := range tc.want {
			if !strings.Contains(out.String(), w) {
				t.Errorf("gatehouse %s: stdout lacks %q:\n%s", strings.Join(tc.args, " "), w, out.String())
			}
		}
	}
	var out, errOut bytes.Buffer
	if code := run(context.Background(), []string{"serve", "--bogus"}, &out, &errOut, nil); code == 0 {
		t.Errorf("serve --bogus exit 0, want an error")
	}
}

// TestListenAloneGivesWorkingURLs: with only GATEHOUSE_LISTEN (or --listen) and no public_url,
// the banner and the upload URLs point at the address really listened on.
func TestListenAloneGivesWorkingURLs(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	cfg := emptyConfig(t, data)
	p := startProcEnv(t, []string{"GATEHOUSE_LISTEN=127.0.0.1:0"}, "--data", data, "--config", cfg, "--tenants", "../../../configs/demo.tenants.yaml")
	banner := strings.Join(p.stdout, "\n")
	for _, seg := range []string{"/email", "/files", "/forms", "/membership", "/records", "/cdn", "/embed", "/admin/v1"} {
		if !strings.Contains(banner, p.url+seg) {
			t.Errorf("banner lacks %s%s:\n%s", p.url, seg, banner)
		}
	}
	status, _, body := p.send(t, "POST", "/files/upload/presigned", "application/json",
		`{"filename":"a.png","mimeType":"image/png","size":68}`, "X-API-Key", "sk_live_demo_server")
	var slot struct {
		UploadURL string `json:"uploadUrl"`
	}
	_ = json.Unmarshal([]byte(body), &slot)
	if status != 200 && status != 201 || !strings.HasPrefix(slot.UploadURL, p.url+"/files/") {
		t.Errorf("presign = %d %s, want an uploadUrl under %s/files/", status, body, p.url)
	}
	p.stop(t)
}

// TestKeyValuesNeverLogged: generated key values are printed once to standard output; the
// values the document gives appear nowhere (banner: name and prefix only), and no key value
// reaches the log.
func TestKeyValuesNeverLogged(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	cfg := filepath.Join(data, "empty.yaml")
	doc := filepath.Join(data, "tenants.yaml")
	if err := os.WriteFile(cfg, []byte("{}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tenants := "orgs:\n  - slug: acme\n    projects:\n      - id: demo\n        keys:\n" +
		"          - {name: server, value: sk_live_given_secret_value, products: [email]}\n" +
		"          - {name: web, value: pk_live_given_public_value, products: [forms]}\n" +
		"          - {name: gen, kind: secret, products: [email]}\n"
	if err := os.WriteFile(doc, []byte(tenants), 0o600); err != nil {
		t.Fatal(err)
	}
	p := startProc(t, "--data", data, "--config", cfg, "--tenants", doc)
	out := strings.Join(p.stdout, "\n")
	var generated string
	for _, l := range p.stdout {
		if _, v, ok := strings.Cut(l, "(shown once): "); ok {
			generated = v
		}
	}
	if !strings.HasPrefix(generated, "sk_live_") || strings.Count(out, generated) != 1 {
		t.Errorf("generated key not printed exactly once:\n%s", out)
	}
	for _, v := range []string{"sk_live_given_secret_value", "pk_live_given_public_value"} {
		if strings.Contains(out, v) {
			t.Errorf("standard output carries the given key value %s:\n%s", v, out)
		}
	}
	if !strings.Contains(out, "acme/demo/server") || !strings.Contains(out, "sk_live_…") {
		t.Errorf("banner does not name the given keys by name and prefix:\n%s", out)
	}
	p.send(t, "GET", "/records/projects/demo/collections/none/records", "", "", "X-API-Key", "pk_live_given_public_value")
	p.stop(t)
	logs := p.stderr.String()
	for _, v := range []string{"sk_live_given_secret_value", "pk_live_given_public_value", generated} {
		if strings.Contains(logs, v) {
			t.Errorf("the log carries key value %s:\n%s", v, logs)
		}
	}
}

// TestRecordsImportExitStatus: an import with a line that failed exits non-zero, and still
// prints the summary.
func TestRecordsImportExitStatus(t *testing.T) {
	t.Parallel()
	p := startDemo(t)
	dir := t.TempDir()
	env := []string{"GATEHOUSE_SERVER=" + p.url, "GATEHOUSE_ADMIN_TOKEN=restart-token"}
	for _, tc := range []struct {
		name, lines string
		code        int
	}{
		{"all good", `{"id":"imp-1","published":true,"data":{"title":"One","views":1}}` + "\n", 0},
		{"one bad line", `{"id":"imp-2","data":{"title":"Two"}}` + "\n" + `{"id":"imp-3","data":{"views":"many"}}` + "\n", 1},
		{"not json", "{oops\n", 1},
		{"duplicate key", `{"id":"imp-4","id":"imp-5","data":{"title":"Dup"}}` + "\n", 1},
		{"wrong type", `{"id":"imp-6","data":"title"}` + "\n", 1},
	} {
		file := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "-")+".ndjson")
		if err := os.WriteFile(file, []byte(tc.lines), 0o600); err != nil {
			t.Fatal(err)
		}
		var out, errOut bytes.Buffer
		code := run(context.Background(), []string{"records", "import", file, "--project", "demo", "--collection", "posts"}, &out, &errOut, env)
		if strings.Contains(errOut.String(), "json: ") || strings.Contains(errOut.String(), "records.") {
			t.Errorf("records import (%s): the errors carry Go text: %s", tc.name, errOut.String())
		}
		if code != tc.code || !strings.Contains(out.String(), " stored (") {
			t.Errorf("records import (%s): exit %d, stdout %q, stderr %q; want exit %d and the summary", tc.name, code, out.String(), errOut.String(), tc.code)
		}
	}
}

// TestUnknownKeyNamesFileAndLine: an unknown key in a tenants document is reported as
// FILE:LINE: path: unknown key, by `serve --tenants` and by `apply -f`, never as encoding/json's
// "unknown field".
func TestUnknownKeyNamesFileAndLine(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bad := filepath.Join(dir, "tenants.yaml")
	if err := os.WriteFile(bad, []byte("orgs:\n  - slug: acme\n    projcts: []\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "gatehouse.yaml")
	if err := os.WriteFile(cfg, []byte("listen: \"127.0.0.1:0\"\nstorag:\n  sync_writes: false\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	want := bad + ":3: orgs[0].projcts: unknown key"
	var out, errOut bytes.Buffer
	if code := run(context.Background(), []string{"serve", "--data", dir, "--config", cfg}, &out, &errOut, nil); code != 1 || !strings.Contains(errOut.String(), cfg+":2: storag: unknown key") {
		t.Errorf("serve with an unknown config key: exit %d, stderr %q", code, errOut.String())
	}
	p := startDemo(t)
	errOut.Reset()
	env := []string{"GATEHOUSE_SERVER=" + p.url, "GATEHOUSE_ADMIN_TOKEN=restart-token"}
	if code := run(context.Background(), []string{"apply", "-f", bad}, &out, &errOut, env); code != 1 || !strings.Contains(errOut.String(), want) || strings.Contains(errOut.String(), "unknown field") {
		t.Errorf("apply -f: exit %d, stderr %q, want %q", code, errOut.String(), want)
	}
	// serve --tenants with the same document.
	errOut.Reset()
	empty := filepath.Join(dir, "empty.yaml")
	if err := os.WriteFile(empty, []byte("{}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if code := run(context.Background(), []string{"serve", "--listen", "127.0.0.1:0", "--data", filepath.Join(dir, "d"), "--config", empty, "--tenants", bad}, &out, &errOut, nil); code != 1 || !strings.Contains(errOut.String(), want) {
		t.Errorf("serve --tenants: exit %d, stderr %q, want %q", code, errOut.String(), want)
	}
}

// TestFirstHourHints: the banner names the dashboard and how to create its first user, and a
// misspelled GATEHOUSE_* variable is reported with the nearest known name instead of being
// ignored in silence (decisions.md 9.6).
func TestFirstHourHints(t *testing.T) {
	t.Parallel()
	p := startProcEnv(t, []string{"GATEHOUSE_LOG_LEVLE=debug"}, "--data", t.TempDir())
	banner := strings.Join(p.stdout, "\n")
	for _, want := range []string{"Dashboard: " + p.url + "/dashboard/", "gatehouse users create --email you@example.com --operator"} {
		if !strings.Contains(banner, want) {
			t.Errorf("the banner lacks %q:\n%s", want, banner)
		}
	}
	p.stop(t)
	if want := `GATEHOUSE_LOG_LEVLE: not a configuration variable, ignored (did you mean \"GATEHOUSE_LOG_LEVEL\"?)`; !strings.Contains(p.stderr.String(), want) {
		t.Errorf("the log lacks %q:\n%s", want, p.stderr)
	}
}
