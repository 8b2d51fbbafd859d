package main

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

// Plugins follow a change made on another node (decisions.md 8.4, edge/bus): a module uploaded
// and a plugin added through node 0 filter submissions on node 1, whose form cache and Wasm host
// held the project before; a config change through node 0 reaches node 1's host too.
func TestPluginsFollowChangesAcrossNodes(t *testing.T) {
	mods := buildExamples(t, "spamguard")
	// The checks below poll a form's submit until the plugin acts: not under the forms limit.
	c := startClusterWith(t, 2, "forms: {rate_per_minute: 100000}\n")
	submit := func(i int, msg string) (int, []byte) {
		code, raw, err := c.call(i, "POST", "/forms/forms/contact/submit", "pk_live_multi_web", "application/json",
			[]byte(`{"data":{"msg":"`+msg+`"}}`))
		if err != nil {
			t.Fatal(err)
		}
		return code, raw
	}
	if code, raw := submit(1, "casino night"); code != 201 {
		t.Fatalf("node 1 before any plugin = %d %s, want 201", code, raw)
	}
	wasm, err := os.ReadFile(mods["spamguard"])
	if err != nil {
		t.Fatal(err)
	}
	if code, raw, err := c.call(0, "POST", "/admin/v1/plugins?project=site&name=sg", "admin", "application/wasm", wasm); err != nil || code != 201 {
		t.Fatalf("upload through node 0 = %d %s (%v)", code, raw, err)
	}
	apply := func(words string) {
		t.Helper()
		doc := strings.Replace(multinodeTenants, "        name: Site\n",
			"        name: Site\n        plugins:\n          - {name: spam, module: sg, hooks: [forms.submit], config: {blockedWords: \""+words+"\"}}\n", 1)
		c.must(0, "POST", "/admin/v1/apply", "admin", doc, 200, nil)
	}
	refused := func(msg string) func() bool {
		return func() bool {
			code, raw := submit(1, msg)
			return code == 422 && bytes.Contains(raw, []byte(`"SPAM_DETECTED"`))
		}
	}
	apply("casino")
	took := await(t, "node 1 refuses spam after the plugin was added on node 0", refused("casino night"))
	t.Logf("plugin added through node 0 filters on node 1 after %v", took)
	apply("pizza")
	took = await(t, "node 1 follows the plugin's new config", refused("pizza party"))
	t.Logf("plugin config changed through node 0 applies on node 1 after %v", took)
	if code, raw := submit(1, "casino night"); code != 201 {
		t.Fatalf("node 1 with the new config, old word = %d %s, want 201", code, raw)
	}
}
