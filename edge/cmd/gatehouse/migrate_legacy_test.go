package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/edge/legacy"
	"github.com/gatehouse-dev/gatehouse/edge/store"
)

// legacyRelease is the last release that kept the products' sections of the tenants document
// below tenancy's keys.
const legacyRelease = "bdd018d"

// buildLegacy builds gatehouse as of legacyRelease into a temporary folder (once per test) from
// this clone's history, and returns the binary and its source tree. It skips the test when the
// history is absent (a shallow clone).
func buildLegacy(t *testing.T) (bin, src string) {
	t.Helper()
	repo, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	if err := exec.Command("git", "-C", repo, "cat-file", "-e", legacyRelease+"^{commit}").Run(); err != nil {
		t.Skipf("git history with %s is absent: %v", legacyRelease, err)
	}
	dir := t.TempDir()
	src = filepath.Join(dir, "src")
	if err := os.Mkdir(src, 0o755); err != nil {
		t.Fatal(err)
	}
	archive := exec.Command("sh", "-c", `git -C "$1" archive "$2" | tar -x -C "$3"`, "sh", repo, legacyRelease, src)
	if out, err := archive.CombinedOutput(); err != nil {
		t.Fatalf("git archive %s: %v %s", legacyRelease, err, out)
	}
	bin = filepath.Join(dir, "gatehouse-old")
	build := exec.Command("go", "build", "-o", bin, "./edge/cmd/gatehouse")
	build.Dir = src
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building %s: %v %s", legacyRelease, err, out)
	}
	return bin, src
}

// legacyOrg adds to the demo document what it lacks: captcha keys, sender defaults of their own,
// and a plugin whose module is uploaded through the admin API.
const legacyOrg = `
  - slug: legacy
    projects:
      - id: leg
        keys:
          - {name: web, value: pk_live_leg_web, products: [forms]}
          - {name: server, value: sk_live_leg_server, products: [email]}
        captcha: {provider: turnstile, siteKey: site-legacy, secret: secret-legacy}
        email:
          from: {email: sender@legacy.test, name: Legacy}
          replyTo: {email: reply@legacy.test}
        forms:
          - {slug: gated, published: true, captcha: true, fields: [{name: message, type: text}]}
          - {slug: contact, published: true, fields: [{name: message, type: text, required: true}]}
`

const legacyPlugins = `        plugins:
          - {name: spam, module: guard, hooks: [forms.submit], config: {blockedWords: casino}}
`

// legacyReads are the public reads (path -> key) compared across the upgrade.
var legacyReads = map[string]string{
	"/records/projects/demo/collections/posts/records?limit=50&sort=createdAt":          "pk_live_demo_web",
	"/records/projects/demo/collections/posts/records?q=hello":                          "pk_live_demo_web",
	"/records/projects/demo/collections/posts/records?filter[category]=guides&limit=50": "pk_live_demo_web",
	"/records/projects/demo/collections/posts/records/post-2?populate=author":           "pk_live_demo_web",
	"/records/projects/demo/collections/posts/aggregate?count=true&groupBy=category":    "pk_live_demo_web",
	"/records/projects/demo/collections/posts":                                          "pk_live_demo_web",
	"/records/projects/demo/collections/posts/records/post-1":                           "pk_live_demo_web",
	"/records/projects/demo/collections/authors/records":                                "pk_live_demo_web",
	"/forms/forms/contact": "pk_live_demo_web",
	"/membership/config":   "pk_live_demo_web",
}

// An upgrade from a data folder of the release before products owned their sections loses
// nothing: started without --tenants, the new binary serves the old folder's forms, templates,
// sender defaults, captcha keys, suppressions (with their source, reason and time), connections,
// collections and records (list, q, indexes), plugins and uploaded modules.
func TestUpgradeFromLegacyLayout(t *testing.T) {
	t.Parallel()
	oldBin, oldSrc := buildLegacy(t)
	guard := buildExamples(t, "spamguard")["spamguard"]
	module, err := os.ReadFile(guard)
	if err != nil {
		t.Fatal(err)
	}
	demo := mustRead(t, filepath.Join(oldSrc, "configs/demo.tenants.yaml"))
	data := t.TempDir()
	file := filepath.Join(data, "tenants.yaml")
	if err := os.WriteFile(file, []byte(demo+legacyOrg), 0o600); err != nil {
		t.Fatal(err)
	}

	// The old release: apply the document, add a suppression and upload a module through its admin
	// API, register the plugin, and note what its public API answers.
	old := startBinEnv(t, oldBin, nil, "--data", data, "--tenants", file)
	if code, body := old.admin(t, "POST", "/orgs/acme/suppressions", `{"email":"Bounced@Example.com","reason":"manual block"}`); code/100 != 2 {
		t.Fatalf("old suppression add = %d %s", code, body)
	}
	if code, body := old.admin(t, "POST", "/plugins?project=leg&name=guard", string(module)); code != 201 {
		t.Fatalf("old module upload = %d %s", code, body)
	}
	if code, body := old.admin(t, "POST", "/apply", demo+legacyOrg+legacyPlugins); code != 200 {
		t.Fatalf("old apply with plugins = %d %s", code, body)
	}
	before := map[string]any{}
	for path, key := range legacyReads {
		code, body := do(t, "GET", old.url+path, key, "")
		if code != 200 {
			t.Fatalf("old GET %s = %d %s", path, code, body)
		}
		var v any
		if err := json.Unmarshal([]byte(body), &v); err != nil {
			t.Fatalf("old GET %s: %v", path, err)
		}
		before[path] = v
	}
	_, oldSupp := old.admin(t, "GET", "/orgs/acme/suppressions", "")
	old.stop(t)

	// A copy of the folder without what the old release mirrored into the records product (its
	// records, indexes, counters and title index): the move alone must rebuild them.
	bare := t.TempDir()
	if err := os.CopyFS(bare, os.DirFS(data)); err != nil {
		t.Fatal(err)
	}
	dropRecordsMirror(t, bare)

	t.Run("bare", func(t *testing.T) { checkUpgraded(t, bare, before, oldSupp) })
	checkUpgraded(t, data, before, oldSupp)

	// A second start finds nothing left to move, and the document re-applied changes nothing.
	p2 := startProc(t, "--data", data)
	if strings.Contains(p2.stderr.String(), "moved the tenants data") {
		t.Errorf("second start moved data again: %s", p2.stderr)
	}
	code, body := p2.admin(t, "POST", "/apply", demo+legacyOrg+legacyPlugins)
	var rep struct{ Changed bool }
	if code != 200 || json.Unmarshal(body, &rep) != nil || rep.Changed {
		t.Errorf("re-apply after the upgrade = %d %s, want no change", code, body)
	}
	if code, body := do(t, "GET", p2.url+"/records/projects/demo/collections/posts/records?q=hello", "pk_live_demo_web", ""); code != 200 || !strings.Contains(body, "post-1") {
		t.Errorf("q after restart = %d %s", code, body)
	}
	p2.stop(t)
}

// dropRecordsMirror deletes the records product's data from the folder (as if the old release
// had crashed before mirroring the document's records).
func dropRecordsMirror(t *testing.T, data string) {
	t.Helper()
	db, err := store.Open(store.Options{Dir: filepath.Join(data, "db")})
	if err != nil {
		t.Fatal(err)
	}
	var keys [][]byte
	err = db.View(context.Background(), func(txn *store.Txn) error {
		return txn.Iterate(store.IterOptions{Prefix: store.Prefix("records"), KeysOnly: true}, func(k, _ []byte) (bool, error) {
			keys = append(keys, bytes.Clone(k))
			return true, nil
		})
	})
	if err == nil && len(keys) == 0 {
		err = errors.New("the old release mirrored no records")
	}
	if err == nil {
		err = db.Update(context.Background(), func(txn *store.Txn) error {
			for _, k := range keys {
				if err := txn.Delete(k); err != nil {
					return err
				}
			}
			return nil
		})
	}
	if err = errors.Join(err, db.Close(), os.RemoveAll(filepath.Join(data, "title.bleve"))); err != nil {
		t.Fatal(err)
	}
}

// checkUpgraded starts the new release on data without the document and checks that it serves
// what the old release did (before: the old public reads; oldSupp: its suppression list), then
// stops it.
func checkUpgraded(t *testing.T, data string, before map[string]any, oldSupp []byte) {
	t.Helper()
	p := startProc(t, "--data", data)
	if !strings.Contains(p.stderr.String(), "moved the tenants data of an older release") {
		t.Errorf("no migration logged: %s", p.stderr)
	}
	for path, key := range legacyReads {
		code, body := do(t, "GET", p.url+path, key, "")
		var v any
		if code != 200 || json.Unmarshal([]byte(body), &v) != nil {
			t.Errorf("GET %s after the upgrade = %d %s", path, code, body)
			continue
		}
		if !reflect.DeepEqual(v, before[path]) {
			t.Errorf("GET %s after the upgrade = %s, want what the old release answered: %v", path, body, before[path])
		}
	}
	// An unpublished document record kept its state (absent from the lists above) and its time.
	if code, body := p.admin(t, "POST", "/projects/demo/collections/posts/records/post-18/publish", ""); code != 200 {
		t.Errorf("publish post-18 after the upgrade = %d %s", code, body)
	}
	var draft struct{ ID, CreatedAt string }
	if code, body := do(t, "GET", p.url+"/records/projects/demo/collections/posts/records/post-18", "pk_live_demo_web", ""); code != 200 ||
		json.Unmarshal([]byte(body), &draft) != nil || draft.CreatedAt == "" ||
		draft.CreatedAt != before["/records/projects/demo/collections/posts/records/post-1"].(map[string]any)["createdAt"] {
		t.Errorf("post-18 once published = %d %s, want the createdAt of the old release's apply (%v)", code, body, before["/records/projects/demo/collections/posts/records/post-1"])
	}
	if code, body := p.admin(t, "GET", "/orgs/acme/suppressions", ""); code != 200 || !jsonEqual(body, oldSupp) ||
		!strings.Contains(string(body), `"source":"admin"`) || !strings.Contains(string(body), "manual block") || !strings.Contains(string(body), `"source":"tenants"`) {
		t.Errorf("suppressions after the upgrade = %d %s, want %s", code, body, oldSupp)
	}
	// Captcha keys: the gated form shows the project's site key.
	if code, body := do(t, "GET", p.url+"/forms/forms/gated", "pk_live_leg_web", ""); code != 200 || !strings.Contains(body, "site-legacy") || !strings.Contains(body, "turnstile") {
		t.Errorf("gated form after the upgrade = %d %s, want the turnstile site key", code, body)
	}
	// The plugin and its uploaded module: spam is refused.
	if code, body := do(t, "POST", p.url+"/forms/forms/contact/submit", "pk_live_leg_web", `{"data":{"message":"cheap casino"}}`); code != 422 || !strings.Contains(body, "SPAM_DETECTED") {
		t.Errorf("spam after the upgrade = %d %s, want 422 SPAM_DETECTED from the uploaded module", code, body)
	}
	if l := p.plugins(t, "leg"); len(l.Items) != 1 || l.Items[0].Name != "spam" {
		t.Errorf("plugins of leg after the upgrade = %+v", l)
	}
	// Templates and sender defaults: a template send without from takes the project's sender.
	for _, c := range []struct{ key, body, want string }{
		{"sk_live_demo_server", `{"to":{"email":"a@example.org"},"templateId":"welcome","variables":{"name":"Ada","product":"Gatehouse"}}`, "hello@acme.test"},
		{"sk_live_leg_server", `{"to":{"email":"b@example.org"},"subject":"Hi","bodyText":"hello"}`, "sender@legacy.test"},
	} {
		code, body := do(t, "POST", p.url+"/email/notifications/send", c.key, c.body)
		var sent struct{ ID string }
		if code != 202 || json.Unmarshal([]byte(body), &sent) != nil || sent.ID == "" {
			t.Errorf("send %s after the upgrade = %d %s", c.body, code, body)
			continue
		}
		if code, m := p.admin(t, "GET", "/email/messages/"+sent.ID, ""); code != 200 || !strings.Contains(string(m), c.want) {
			t.Errorf("message %s = %d %s, want from %s", sent.ID, code, m, c.want)
		}
	}
	if code, m := p.admin(t, "GET", "/email/messages?limit=10", ""); code != 200 || !strings.Contains(string(m), "reply@legacy.test") {
		t.Errorf("messages = %d %s, want the legacy project's reply-to default", code, m)
	}
	p.stop(t)
}

// jsonEqual reports whether a and b hold the same JSON value.
func jsonEqual(a, b []byte) bool {
	var x, y any
	return json.Unmarshal(a, &x) == nil && json.Unmarshal(b, &y) == nil && reflect.DeepEqual(x, y)
}

// Every kind of the old layout has one owner that moves it (legacy.Migrate leaves a kind no
// converter names where it is, and nothing reads it any more), with the shape of its old keys,
// and records move after their collections.
func TestLegacyConvertersCoverTheOldLayout(t *testing.T) {
	t.Parallel()
	// The old layout of legacyRelease: tenancy/<kind>/<parts> or a member of the project value.
	old := map[string]legacy.Converter{
		"suppress": {Parts: 2}, "form": {Parts: 2}, "template": {Parts: 2}, "connection": {Parts: 2},
		"collection": {Parts: 2}, "record": {Parts: 3}, "plugin": {Parts: 2}, "module": {Parts: 2},
		"captcha": {Member: "captcha"}, "sender": {Member: "email"},
	}
	// The converters come from the built modules (and the plugin registry).
	d := testDeps(t, t.TempDir(), "127.0.0.1:0")
	t.Cleanup(func() { _ = d.db.Close() })
	app, err := wire(context.Background(), d)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = app.close() })
	seen := map[string]int{}
	for i, c := range app.legacyConverters() {
		want, ok := old[c.Kind]
		switch {
		case !ok:
			t.Errorf("converter of kind %q: the old layout has no such kind", c.Kind)
		case c.Parts != want.Parts || c.Member != want.Member || c.Move == nil:
			t.Errorf("converter of kind %q: Parts %d, Member %q; want %d, %q and a Move", c.Kind, c.Parts, c.Member, want.Parts, want.Member)
		}
		if _, dup := seen[c.Kind]; dup {
			t.Errorf("two converters of kind %q", c.Kind)
		}
		seen[c.Kind] = i
	}
	for kind := range old {
		if _, ok := seen[kind]; !ok {
			t.Errorf("no converter moves the old %q entries", kind)
		}
	}
	if seen["record"] < seen["collection"] {
		t.Error("records move before their collections")
	}
}
