package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// The example plugins written in C, WAT and AssemblyScript (plugins/examples/*-wordfilter),
// each built by the Makefile in its folder with its own toolchain, run as forms.submit
// filters in the real gateway: each rejects its blocked word with SPAM_DETECTED and lets a
// clean message through. `make test` installs the toolchains first (make plugin-toolchains)
// and sets GATEHOUSE_REQUIRE_PLUGIN_TOOLCHAINS=1, so a missing one fails the test there
// instead of skipping that language.
func TestPluginsInOtherLanguages(t *testing.T) {
	t.Parallel()
	required := os.Getenv("GATEHOUSE_REQUIRE_PLUGIN_TOOLCHAINS") == "1"
	examples := []struct {
		name, project string
		tools         []string
		config        string // the plugin's config in the tenants document
		spam          string // a message it rejects
	}{
		{"c-wordfilter", "clang", []string{"make", "clang", "wasm-ld"}, "{word: lottery}", "Win the LOTTERY now"},
		{"wat-wordfilter", "wat", []string{"make", "wat2wasm"}, "{}", "Cheap CaSiNo chips"},
		{"assemblyscript-wordfilter", "assemblyscript", []string{"make", "node", "npm"}, "{word: lottery}", "Win the Lottery ✓"},
	}
	out := t.TempDir()
	var (
		mu     sync.Mutex
		wg     sync.WaitGroup
		built  = map[string]string{}
		failed []string
	)
	for _, ex := range examples {
		var missing []string
		for _, tool := range ex.tools {
			if _, err := exec.LookPath(tool); err != nil {
				missing = append(missing, tool)
			}
		}
		if len(missing) > 0 {
			if required {
				t.Errorf("%s: %v not installed (make plugin-toolchains installs them)", ex.name, missing)
			} else {
				t.Logf("%s: not built, %v not installed (make plugin-toolchains installs them)", ex.name, missing)
			}
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			wasm := filepath.Join(out, ex.name+".wasm")
			cmd := exec.Command("make", "-s", "-C", filepath.Join("..", "..", "..", "plugins", "examples", ex.name), "OUT="+wasm)
			b, err := cmd.CombinedOutput()
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				failed = append(failed, fmt.Sprintf("make %s: %v\n%s", ex.name, err, b))
				return
			}
			built[ex.name] = wasm
		}()
	}
	wg.Wait()
	for _, f := range failed {
		t.Error(f)
	}
	if len(built) == 0 {
		if required {
			t.Fatal("no example built")
		}
		t.Skip("no toolchain for the C, WAT or AssemblyScript examples is installed")
	}

	var tenants strings.Builder
	tenants.WriteString("orgs:\n  - slug: langs\n    projects:\n")
	for _, ex := range examples {
		if built[ex.name] == "" {
			continue
		}
		fmt.Fprintf(&tenants, `      - id: %[1]s
        keys:
          - {name: web, value: pk_live_%[1]s_web, products: [forms]}
        forms:
          - slug: contact
            published: true
            fields:
              - {name: message, type: textarea, required: true}
        plugins:
          - {name: wordfilter, module: %[2]q, hooks: [forms.submit], onError: closed, config: %[3]s}
`, ex.project, built[ex.name], ex.config)
	}
	data := t.TempDir()
	cfg, file := filepath.Join(data, "empty.yaml"), filepath.Join(data, "tenants.yaml")
	if err := os.WriteFile(cfg, []byte("{}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, []byte(tenants.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	p := startProc(t, "--data", data, "--config", cfg, "--tenants", file)
	for _, ex := range examples {
		if built[ex.name] == "" {
			continue
		}
		key := "pk_live_" + ex.project + "_web"
		code, body := do(t, "POST", p.url+"/forms/forms/contact/submit", key, fmt.Sprintf(`{"data":{"message":%q}}`, ex.spam))
		if code != 422 || !strings.Contains(body, `"error":"SPAM_DETECTED"`) {
			t.Errorf("%s: submission %q = %d %s, want 422 SPAM_DETECTED", ex.name, ex.spam, code, body)
		}
		if code, body := do(t, "POST", p.url+"/forms/forms/contact/submit", key, `{"data":{"message":"Hello there"}}`); code != 201 {
			t.Errorf("%s: clean submission = %d %s, want 201", ex.name, code, body)
		}
	}
	p.stop(t)
}
