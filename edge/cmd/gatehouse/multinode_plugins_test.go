package main

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Plugins follow a change made on another node (decisions.md 8.4, edge/bus): a module uploaded
// and a plugin added through node 0 filter submissions on node 1, whose form cache and Wasm host
// held the project before; a config change through node 0 reaches node 1's host too; and a
// module new to node 1, uploaded through node 0 for a plugin that names it, filters on node 1
// (timed from the upload's answer: node 1 runs it on wazero's interpreter until its machine code
// is compiled, plugins/host compile.go). GATEHOUSE_PLUGIN_ROUNDS repeats that last step with
// fresh modules and logs the median (a measurement, not a check).
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
	upload := func(name string, wasm []byte) {
		t.Helper()
		if code, raw, err := c.call(0, "POST", "/admin/v1/plugins?project=site&name="+name, "admin", "application/wasm", wasm); err != nil || code != 201 {
			t.Fatalf("upload of %s through node 0 = %d %s (%v)", name, code, raw, err)
		}
	}
	upload("sg", wasm)
	apply := func(module, words string) {
		t.Helper()
		doc := strings.Replace(multinodeTenants, "        name: Site\n",
			"        name: Site\n        plugins:\n          - {name: spam, module: "+module+", hooks: [forms.submit], config: {blockedWords: \""+words+"\"}}\n", 1)
		c.must(0, "POST", "/admin/v1/apply", "admin", doc, 200, nil)
	}
	refused := func(msg string) func() bool {
		return func() bool {
			code, raw := submit(1, msg)
			return code == 422 && bytes.Contains(raw, []byte(`"SPAM_DETECTED"`))
		}
	}
	apply("sg", "casino")
	took := await(t, "node 1 refuses spam after the plugin was added on node 0", refused("casino night"))
	t.Logf("plugin added through node 0 filters on node 1 after %v", took)
	apply("sg", "pizza")
	took = await(t, "node 1 follows the plugin's new config", refused("pizza party"))
	t.Logf("plugin config changed through node 0 applies on node 1 after %v", took)
	if code, raw := submit(1, "casino night"); code != 201 {
		t.Fatalf("node 1 with the new config, old word = %d %s, want 201", code, raw)
	}

	rounds := 1
	if n, err := strconv.Atoi(os.Getenv("GATEHOUSE_PLUGIN_ROUNDS")); err == nil && n > 0 {
		rounds = n
	}
	var times []time.Duration
	for r := range rounds {
		// The plugin names a module not uploaded yet: it is refused, and fails open.
		module, word := fmt.Sprintf("sg%d", r), fmt.Sprintf("word%d", r)
		apply(module, word)
		await(t, "node 1 lets submissions through while the plugin's module is missing", func() bool {
			code, _ := submit(1, word)
			return code == 201
		})
		upload(module, withCustomSection(wasm, "gatehouse-test-round", module)) // new bytes: compiled nowhere yet
		took := await(t, "node 1 runs a module uploaded through node 0", refused(word))
		t.Logf("round %d: module uploaded through node 0 filters on node 1 %v after the upload's answer", r, took)
		times = append(times, took)
	}
	slices.Sort(times)
	t.Logf("upload's answer on node 0 to the first refusal on node 1: median %v of %d (min %v, max %v)",
		times[len(times)/2], len(times), times[0], times[len(times)-1])
}

// withCustomSection returns wasm with a custom section appended: a module that behaves the
// same but whose bytes, and so whose compiled code, no cache holds yet.
func withCustomSection(wasm []byte, name, payload string) []byte {
	var body []byte
	body = binary.AppendUvarint(body, uint64(len(name)))
	body = append(body, name...)
	body = append(body, payload...)
	out := append(slices.Clip(wasm), 0)
	out = binary.AppendUvarint(out, uint64(len(body)))
	return append(out, body...)
}
