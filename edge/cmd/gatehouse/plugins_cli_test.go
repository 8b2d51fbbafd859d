package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
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

// rejectThroughGateway follows the end of the walk-through in docs/plugins.md: it starts the
// gateway, applies the tenants document the page shows (its module path pointed at wasm)
// with `gatehouse apply`, and submits a form the plugin rejects.
func rejectThroughGateway(t *testing.T, wasm string) {
	t.Helper()
	doc := docYAML(t, "../../../docs/plugins.md", "module: nocasino/nocasino.wasm")
	doc = strings.Replace(doc, "module: nocasino/nocasino.wasm", "module: "+strconv.Quote(wasm), 1)
	data := t.TempDir()
	cfg, tenants := filepath.Join(data, "empty.yaml"), filepath.Join(data, "tenants.yaml")
	if err := os.WriteFile(cfg, []byte("{}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(tenants, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	p := startProc(t, "--data", data, "--config", cfg)
	var out, errOut bytes.Buffer
	env := []string{"GATEHOUSE_SERVER=" + p.url, "GATEHOUSE_ADMIN_TOKEN=restart-token"}
	if code := run(context.Background(), []string{"apply", "-f", tenants}, &out, &errOut, env); code != 0 || !strings.Contains(out.String(), "created plugin demo/nocasino") {
		t.Fatalf("apply of the walk-through's tenants document: exit %d: %s%s", code, out.String(), errOut.String())
	}
	const spam = `{"data":{"email":"ada@example.com","message":"Cheap casino chips"}}`
	if code, body := do(t, "POST", p.url+"/forms/forms/contact/submit", "pk_live_demo_web", spam); code != 422 || body != `{"error":"SPAM_DETECTED","message":"no casino offers, please"}` {
		t.Errorf("spam submission = %d %s, want 422 SPAM_DETECTED", code, body)
	}
	if code, body := do(t, "POST", p.url+"/forms/forms/contact/submit", "pk_live_demo_web", `{"data":{"email":"ada@example.com","message":"Hello"}}`); code != 201 {
		t.Errorf("clean submission = %d %s, want 201", code, body)
	}
	p.stop(t)
}

// docYAML returns the first YAML code block of a Markdown page that contains marker,
// without the indentation it has inside a list item.
func docYAML(t *testing.T, page, marker string) string {
	t.Helper()
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	for _, block := range strings.Split(string(b), "```yaml\n")[1:] {
		lines := strings.Split(block, "\n")
		var out []string
		for _, l := range lines {
			if strings.TrimSpace(l) == "```" {
				break
			}
			out = append(out, l)
		}
		indent := len(lines[0]) - len(strings.TrimLeft(lines[0], " "))
		text := ""
		for _, l := range out {
			if len(l) >= indent {
				l = l[indent:]
			}
			text += l + "\n"
		}
		if strings.Contains(text, marker) {
			return text
		}
	}
	t.Fatalf("%s has no YAML block containing %q", page, marker)
	return ""
}

func TestPluginsCLIErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	junk := filepath.Join(dir, "junk.wasm")
	input := filepath.Join(dir, "in.json")
	typo := filepath.Join(dir, "typo.json")
	two := filepath.Join(dir, "two.json")
	for name, body := range map[string]string{junk: "not wasm", input: `{"project":"demo","form":"f","data":{}}`, typo: `{"projekt":"demo"}`, two: `{"project":"demo"} {"project":"x"}`} {
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
		{"input with two documents", []string{"plugins", "run", junk, "--hook", "forms.submit", "--input", two}, "more than one JSON document"},
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

func TestPluginFileName(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"nocasino.wasm", "nocasino"},
		{"/tmp/My Filter.wasm", "my-filter"},
		{"dir/c_word.v2.wasm", "c_word-v2"},
		{"--.wasm", "plugin"},
		{strings.Repeat("a", 80) + ".wasm", strings.Repeat("a", 64)},
	} {
		if got := pluginFileName(tc.in); got != tc.want {
			t.Errorf("pluginFileName(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
