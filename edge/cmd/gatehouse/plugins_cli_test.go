package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// offlineEnv is the environment of a plugin author with no module proxy at all (so no
// access to the gateway's module, which is not published anyway) and no workspace.
func offlineEnv() []string {
	return append(os.Environ(), "GOFLAGS=-mod=mod", "GOPROXY=off", "GOWORK=off")
}

// runCLI runs the gatehouse command line in process.
func runCLI(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = run(context.Background(), args, &out, &errOut, nil)
	return code, out.String(), errOut.String()
}

// initPlugin runs `gatehouse plugins init` into a new folder outside the repository and
// builds the result with its own Makefile, offline; it returns the folder and the module.
func initPlugin(t *testing.T, hook string) (dir, wasm string) {
	t.Helper()
	name := "my-" + strings.ReplaceAll(hook, ".", "-")
	dir = filepath.Join(t.TempDir(), name)
	if code, out, errOut := runCLI(t, "plugins", "init", dir, "--hook", hook); code != 0 || !strings.Contains(out, "make test") {
		t.Fatalf("plugins init --hook %s: exit %d\n%s%s", hook, code, out, errOut)
	}
	for _, target := range []string{"test", name + ".wasm"} {
		cmd := exec.Command("make", target)
		cmd.Dir, cmd.Env = dir, offlineEnv()
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("make %s in the folder plugins init wrote (offline): %v\n%s", target, err, out)
		}
	}
	return dir, filepath.Join(dir, name+".wasm")
}

// `gatehouse plugins init` writes a folder that builds and tests with no module proxy, for
// every hook; `gatehouse plugins run` runs the module on the sample input the folder
// carries and prints the verdict, the output and the guest's log; and the forms.submit
// plugin, applied through a tenants document, rejects a submission in the running gateway.
func TestPluginsInitBuildRun(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		hook  string
		flags []string
		want  []string // in the output of plugins run
	}{
		{"forms.submit", nil, []string{`verdict: reject SPAM_DETECTED "no casino offers, please"`, `"code":"SPAM_DETECTED"`, "INFO rejected a submission to contact: it mentions casino"}},
		{"records.read", nil, []string{"verdict: rewritten", `{"records":[{"id":"p1","name":"Ada"},{"id":"p2","name":"Alan"}]}`}},
		{"email.send", []string{"--config", "blockedDomains=example.invalid"}, []string{`verdict: reject RECIPIENT_BLOCKED "emails to example.invalid are not sent"`}},
		{"captcha.verify", []string{"--config", "token=letmein"}, []string{"verdict: failure", `{"success":false}`}},
	} {
		t.Run(tc.hook, func(t *testing.T) {
			t.Parallel()
			dir, wasm := initPlugin(t, tc.hook)
			args := append([]string{"plugins", "run", wasm, "--hook", tc.hook, "--input", filepath.Join(dir, "testdata", "input.json")}, tc.flags...)
			code, out, errOut := runCLI(t, args...)
			if code != 0 {
				t.Fatalf("plugins run: exit %d\n%s%s", code, out, errOut)
			}
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("plugins run printed\n%s\nwant it to contain %s", out, w)
				}
			}
			if tc.hook == "forms.submit" {
				rejectThroughGateway(t, wasm)
			}
			if tc.hook == "captcha.verify" {
				// Without its config the plugin reports an error: the call fails, and says why.
				code, out, _ := runCLI(t, "plugins", "run", wasm, "--hook", tc.hook, "--input", filepath.Join(dir, "testdata", "input.json"))
				if code != 1 || !strings.Contains(out, "verdict: failed") || !strings.Contains(out, "config key token is not set") {
					t.Errorf("plugins run without config: exit %d\n%s", code, out)
				}
			}
		})
	}
}

// rejectThroughGateway starts the gateway, applies a tenants document that registers wasm
// for forms.submit with `gatehouse apply`, and submits a form the plugin rejects.
func rejectThroughGateway(t *testing.T, wasm string) {
	t.Helper()
	data := t.TempDir()
	const base = `
orgs:
  - slug: acme
    projects:
      - id: demo
        keys:
          - {name: web, value: pk_live_demo_web, products: [forms]}
        forms:
          - slug: contact
            published: true
            fields:
              - {name: message, type: textarea, required: true}
`
	cfg, tenants := filepath.Join(data, "empty.yaml"), filepath.Join(data, "tenants.yaml")
	if err := os.WriteFile(cfg, []byte("{}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(tenants, []byte(base), 0o600); err != nil {
		t.Fatal(err)
	}
	p := startProc(t, "--data", data, "--config", cfg, "--tenants", tenants)
	const spam = `{"data":{"message":"Cheap casino chips"}}`
	if code, body := do(t, "POST", p.url+"/forms/forms/contact/submit", "pk_live_demo_web", spam); code != 201 {
		t.Fatalf("before the plugin: submission = %d %s, want 201", code, body)
	}
	withPlugin := base + fmt.Sprintf(`        plugins:
          - name: nocasino
            module: %q
            hooks: [forms.submit]
            onError: closed
            limits: {memoryMB: 16, timeoutMs: 50}
            config: {word: casino}
`, wasm)
	if err := os.WriteFile(tenants, []byte(withPlugin), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	env := []string{"GATEHOUSE_SERVER=" + p.url, "GATEHOUSE_ADMIN_TOKEN=restart-token"}
	if code := run(context.Background(), []string{"apply", "-f", tenants}, &out, &errOut, env); code != 0 || !strings.Contains(out.String(), "plugin") {
		t.Fatalf("apply: exit %d: %s%s", code, out.String(), errOut.String())
	}
	if code, body := do(t, "POST", p.url+"/forms/forms/contact/submit", "pk_live_demo_web", spam); code != 422 || !strings.Contains(body, `"error":"SPAM_DETECTED"`) || !strings.Contains(body, "no casino offers, please") {
		t.Errorf("after the apply: spam submission = %d %s, want 422 SPAM_DETECTED", code, body)
	}
	if code, body := do(t, "POST", p.url+"/forms/forms/contact/submit", "pk_live_demo_web", `{"data":{"message":"Hello"}}`); code != 201 {
		t.Errorf("after the apply: clean submission = %d %s, want 201", code, body)
	}
	p.stop(t)
}

func TestPluginsCLIErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	junk := filepath.Join(dir, "junk.wasm")
	input := filepath.Join(dir, "in.json")
	typo := filepath.Join(dir, "typo.json")
	for name, body := range map[string]string{junk: "not wasm", input: `{"project":"demo","form":"f","data":{}}`, typo: `{"projekt":"demo"}`} {
		if err := os.WriteFile(name, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "taken"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
		want string // in stderr
	}{
		{"no subcommand", []string{"plugins"}, "run or init"},
		{"unknown subcommand", []string{"plugins", "build"}, `unknown subcommand "build"`},
		{"run without hook", []string{"plugins", "run", junk, "--input", input}, "usage: gatehouse plugins run"},
		{"run of a missing module", []string{"plugins", "run", filepath.Join(dir, "none.wasm"), "--hook", "forms.submit", "--input", input}, "no such file"},
		{"run of a module the host refuses", []string{"plugins", "run", junk, "--hook", "forms.submit", "--input", input}, "the host refuses"},
		{"run with an unknown hook", []string{"plugins", "run", junk, "--hook", "forms.sumbit", "--input", input}, "the host refuses"},
		{"input with an unknown member", []string{"plugins", "run", junk, "--hook", "forms.submit", "--input", typo}, `unknown field "projekt"`},
		{"config without =", []string{"plugins", "run", junk, "--hook", "forms.submit", "--input", input, "--config", "word"}, "not key=value"},
		{"init without a folder", []string{"plugins", "init"}, "usage: gatehouse plugins init"},
		{"init with an unknown hook", []string{"plugins", "init", filepath.Join(dir, "x"), "--hook", "records.write"}, `unknown hook "records.write"`},
		{"init into a folder that is not empty", []string{"plugins", "init", dir}, "is not empty"},
	} {
		code, _, errOut := runCLI(t, tc.args...)
		if code == 0 || !strings.Contains(errOut, tc.want) {
			t.Errorf("%s: gatehouse %s: exit %d, stderr %q; want an error containing %q", tc.name, strings.Join(tc.args, " "), code, errOut, tc.want)
		}
	}
}
