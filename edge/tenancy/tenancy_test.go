package tenancy_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/edge/auth"
	"github.com/gatehouse-dev/gatehouse/edge/store"
	"github.com/gatehouse-dev/gatehouse/edge/tenancy"
)

func open(t *testing.T) *tenancy.Service {
	t.Helper()
	db, err := store.Open(store.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return tenancy.New(db, tenancy.Options{})
}

func demo(t *testing.T) []byte {
	t.Helper()
	raw, err := os.ReadFile("../../configs/demo.tenants.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

func apply(t *testing.T, s *tenancy.Service, raw []byte) *tenancy.Report {
	t.Helper()
	doc, err := tenancy.Parse(raw)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	rep, err := s.Apply(context.Background(), doc)
	if err != nil {
		t.Fatalf("Apply: %v", err)
	}
	return rep
}

func TestApplyDemoTwice(t *testing.T) {
	t.Parallel()
	s := open(t)
	first := apply(t, s, demo(t))
	if !first.Changed || first.Created < 30 {
		t.Fatalf("first apply: changed=%v created=%d", first.Changed, first.Created)
	}
	second := apply(t, s, demo(t))
	if second.Changed || len(second.Changes) != 0 {
		t.Fatalf("second apply changed: %+v", second.Changes)
	}
	// The JSON form of the same document is the same document.
	ctx := context.Background()
	k, err := s.KeyByHash(ctx, auth.Hash("pk_live_demo_web"))
	if err != nil || k.Org != "acme" || k.Project != "demo" || k.Kind != auth.Publishable || !k.HasProduct("records") {
		t.Fatalf("KeyByHash = %+v, %v", k, err)
	}
	if _, err := s.KeyByHash(ctx, auth.Hash("pk_live_nope")); !errors.Is(err, auth.ErrUnknownKey) {
		t.Errorf("unknown key: %v", err)
	}
	c, err := s.ActiveConnection(ctx, "demo")
	if err != nil || c.IdpInstanceDomain != "clerk.example.com" || c.IdpSecretKey == "" {
		t.Errorf("ActiveConnection = %+v, %v", c, err)
	}
	if _, err := s.ActiveConnection(ctx, "docs"); !errors.Is(err, tenancy.ErrNotFound) {
		t.Errorf("docs ActiveConnection err = %v, want ErrNotFound", err)
	}
	recs, err := s.Records(ctx, "demo", "posts")
	if err != nil || len(recs) != 20 {
		t.Errorf("Records = %d, %v", len(recs), err)
	}
	f, err := s.Form(ctx, "demo", "contact")
	if err != nil || len(f.Fields) != 3 || f.Visibility != "public" || f.Captcha.Enabled {
		t.Errorf("Form = %+v, %v", f, err)
	}
	if ok, _ := s.IsSuppressed(ctx, "acme", "Blocked@Example.com"); !ok {
		t.Errorf("suppression not matched case-insensitively")
	}
}

func TestApplyReportsChange(t *testing.T) {
	t.Parallel()
	s := open(t)
	apply(t, s, demo(t))
	changed := strings.Replace(string(demo(t)), "title: Contact us", "title: Contact", 1)
	rep := apply(t, s, []byte(changed))
	if !rep.Changed || rep.Updated != 1 || rep.Changes[0].Path != "demo/contact" {
		t.Fatalf("report = %+v", rep)
	}
}

func TestInvalidDocumentsNamePaths(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, doc, want string }{
		{"key prefix", `orgs: [{slug: a, projects: [{id: p, keys: [{name: k, value: pk_live_okay, products: [forms]}, {name: k2, value: pk_live_ok2x, products: [forms]}, {name: k3, value: xx_bad, products: [forms]}]}]}]`,
			"orgs[0].projects[0].keys[2]: value must start with pk_live_, pk_test_ or sk_live_"},
		{"unknown key", "orgs:\n  - slug: a\n    projcts: []\n", "3: orgs[0].projcts: unknown key"},
		{"bad slug", `orgs: [{slug: "A B"}]`, "orgs[0].slug"},
		{"duplicate project", `orgs: [{slug: a, projects: [{id: p}]}, {slug: b, projects: [{id: p}]}]`, "orgs[1].projects[0]: project id \"p\" repeats orgs[0].projects[0]"},
		{"unknown product", `orgs: [{slug: a, keys: [{name: k, value: pk_live_abcd, products: [fax]}]}]`, "orgs[0].keys[0].products[0]"},
		{"test key scope", `orgs: [{slug: a, keys: [{name: k, value: pk_test_abcd, products: [forms]}]}]`, "pk_test_ keys are for the membership embed only"},
		{"relation target", `orgs: [{slug: a, projects: [{id: p, collections: [{name: c, fields: [{name: r, type: relation, collection: nope}]}]}]}]`, "orgs[0].projects[0].collections[0].fields[0].collection"},
		{"record value", `orgs: [{slug: a, projects: [{id: p, collections: [{name: c, fields: [{name: n, type: number}], records: [{id: r1, data: {n: "x"}}]}]}]}]`, "orgs[0].projects[0].collections[0].records[0].data.n"},
		{"idp key host", `orgs: [{slug: a, projects: [{id: p, membership: {connections: [{name: m, active: true, idpPublishableKey: pk_test_Y2xlcmsuZXhhbXBsZS5jb20k, idpInstanceDomain: other.example.org}]}}]}]`, "does not match idpInstanceDomain"},
		{"two active", `orgs: [{slug: a, projects: [{id: p, membership: {connections: [{name: m, active: true, idpPublishableKey: pk_test_Y2xlcmsuZXhhbXBsZS5jb20k, idpInstanceDomain: clerk.example.com}, {name: n, active: true, idpPublishableKey: pk_test_Y2xlcmsuZXhhbXBsZS5jb20k, idpInstanceDomain: clerk.example.com}]}}]}]`, "only one connection may be active"},
		{"form field type", `orgs: [{slug: a, projects: [{id: p, forms: [{slug: f, fields: [{name: x, type: blob}]}]}]}]`, "orgs[0].projects[0].forms[0].fields[0].type"},
		{"plugin hook", `orgs: [{slug: a, projects: [{id: p, plugins: [{name: x, module: x.wasm, hooks: [nope]}]}]}]`, "orgs[0].projects[0].plugins[0].hooks[0]"},
		{"captcha keys", `orgs: [{slug: a, projects: [{id: p, captcha: {provider: turnstile}}]}]`, "orgs[0].projects[0].captcha"},
		{"not yaml", "orgs: [", "document"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := tenancy.Parse([]byte(tc.doc))
			var inv *tenancy.InvalidError
			if !errors.As(err, &inv) {
				t.Fatalf("Parse(%s) err = %v, want *InvalidError", tc.name, err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Parse(%s) = %v, want it to mention %q", tc.name, err, tc.want)
			}
		})
	}
}

// A document that validates but conflicts with stored state is refused whole.
func TestConflictAppliesNothing(t *testing.T) {
	t.Parallel()
	s := open(t)
	apply(t, s, demo(t))
	doc, err := tenancy.Parse([]byte(`orgs: [{slug: zeta, projects: [{id: zproj, forms: [{slug: f, fields: [{name: a, type: text}]}], keys: [{name: stolen, value: pk_live_demo_web, products: [forms]}]}]}]`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Apply(context.Background(), doc); err == nil || !strings.Contains(err.Error(), "already belongs to key acme/demo/web") {
		t.Fatalf("Apply with a taken key value = %v", err)
	}
	ctx := context.Background()
	if _, err := s.Org(ctx, "zeta"); !errors.Is(err, tenancy.ErrNotFound) {
		t.Errorf("org of the refused document was written: %v", err)
	}
	if _, err := s.Form(ctx, "zproj", "f"); !errors.Is(err, tenancy.ErrNotFound) {
		t.Errorf("form of the refused document was written: %v", err)
	}
}

func TestGeneratedKeysAndRotation(t *testing.T) {
	t.Parallel()
	s := open(t)
	ctx := context.Background()
	doc := `orgs: [{slug: a, projects: [{id: p, keys: [{name: gen, kind: secret, products: [email]}]}]}]`
	rep := apply(t, s, []byte(doc))
	if len(rep.Generated) != 1 || !strings.HasPrefix(rep.Generated[0].Value, "sk_live_") {
		t.Fatalf("generated = %+v", rep.Generated)
	}
	val := rep.Generated[0].Value
	if rep := apply(t, s, []byte(doc)); rep.Changed || len(rep.Generated) != 0 {
		t.Errorf("re-apply generated again: %+v", rep)
	}
	if _, err := s.KeyByHash(ctx, auth.Hash(val)); err != nil {
		t.Errorf("generated key not found: %v", err)
	}
	// Giving the key a value rotates it: the old value stops working.
	apply(t, s, []byte(`orgs: [{slug: a, projects: [{id: p, keys: [{name: gen, value: sk_live_rotated1, products: [email]}]}]}]`))
	if _, err := s.KeyByHash(ctx, auth.Hash(val)); !errors.Is(err, auth.ErrUnknownKey) {
		t.Errorf("old value after rotation: %v", err)
	}
	g, err := s.CreateKey(ctx, tenancy.KeyRequest{Org: "a", Project: "p", Kind: "publishable", Products: []string{"forms"}})
	if err != nil || !strings.HasPrefix(g.Value, "pk_live_") {
		t.Fatalf("CreateKey = %+v, %v", g, err)
	}
	if err := s.RevokeKey(ctx, "a", "p", g.Name); err != nil {
		t.Fatal(err)
	}
	if k, _ := s.KeyByHash(ctx, auth.Hash(g.Value)); !k.Revoked {
		t.Errorf("revoked key not marked")
	}
}

func TestPrune(t *testing.T) {
	t.Parallel()
	s := open(t)
	ctx := context.Background()
	apply(t, s, demo(t))
	if err := s.Suppress(ctx, "acme", "bounced@example.com", "bounce", "550"); err != nil {
		t.Fatal(err)
	}
	rep := apply(t, s, []byte(`prune: true
orgs: [{slug: acme, projects: [{id: demo, keys: [{name: web, value: pk_live_demo_web, products: [forms]}]}]}]`))
	if rep.Deleted == 0 {
		t.Fatalf("prune deleted nothing")
	}
	if _, err := s.Form(ctx, "demo", "contact"); !errors.Is(err, tenancy.ErrNotFound) {
		t.Errorf("form survived prune: %v", err)
	}
	if _, err := s.KeyByHash(ctx, auth.Hash("sk_live_demo_server")); !errors.Is(err, auth.ErrUnknownKey) {
		t.Errorf("key survived prune: %v", err)
	}
	if ok, _ := s.IsSuppressed(ctx, "acme", "bounced@example.com"); !ok {
		t.Errorf("bounce suppression was pruned")
	}
	if ok, _ := s.IsSuppressed(ctx, "acme", "blocked@example.com"); ok {
		t.Errorf("document suppression survived prune")
	}
}

func TestCheckIdpKey(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		key, domain string
		ok          bool
	}{
		{"pk_test_Y2xlcmsuZXhhbXBsZS5jb20k", "clerk.example.com", true},
		{"pk_live_Y2xlcmsuZXhhbXBsZS5jb20k", "example.com", true},
		{"pk_test_Y2xlcmsuZXhhbXBsZS5jb20k==", "clerk.example.com", false}, // padding where none belongs
		{"pk_test_Y2xlcmsuZXhhbXBsZS5jb20k", "other.org", false},
		{"sk_test_Y2xlcmsuZXhhbXBsZS5jb20k", "clerk.example.com", false},
		{"pk_test_!!!", "clerk.example.com", false},
		{"pk_test_Y2xlcmsuZXhhbXBsZS5jb20", "clerk.example.com", false},                 // no trailing $
		{"pk_live_ZXZpbC50ZXN0Iy5jbGVyay5leGFtcGxlLmNvbSQ", "clerk.example.com", false}, // evil.test#.clerk.example.com$
		{"pk_test_Y2xlcmsuZXhhbXBsZS5jb20k", "Clerk.Example.com", true},
		{"pk_test_Y2xlcmsuZXhhbXBsZS5jb20k", "com", false},
		{"pk_test_Y2xlcmsuZXhhbXBsZS5jb20k====", "clerk.example.com", false},
	} {
		if err := tenancy.CheckIdpKey(tc.key, tc.domain); (err == nil) != tc.ok {
			t.Errorf("CheckIdpKey(%q, %q) = %v, want ok=%v", tc.key, tc.domain, err, tc.ok)
		}
	}
}

func FuzzParse(f *testing.F) {
	raw, err := os.ReadFile("../../configs/demo.tenants.yaml")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(raw)
	f.Add([]byte(`{"orgs":[{"slug":"a","keys":[{"name":"k","value":"pk_live_abcd","products":["forms"]}]}]}`))
	f.Add([]byte(`orgs: [{slug: a, projects: [{id: p, forms: [{slug: f, captcha: {plugin: x}, fields: [{name: a, type: text}]}]}]}]`))
	f.Add([]byte("prune: true\norgs: []"))
	f.Add([]byte("orgs: [{slug: a, projects: [{id: p, collections: [{name: c, fields: [{name: t, type: multiselect, options: [a]}], records: [{id: r, data: {t: [a, 1]}}]}]}]}]"))
	f.Fuzz(func(t *testing.T, data []byte) {
		doc, err := tenancy.Parse(data)
		if err != nil {
			var inv *tenancy.InvalidError
			if !errors.As(err, &inv) && !errors.Is(err, tenancy.ErrTooLarge) {
				t.Fatalf("Parse error of unexpected type %T: %v", err, err)
			}
			return
		}
		if err := doc.Validate(); err != nil {
			t.Fatalf("a parsed document fails Validate: %v", err)
		}
	})
}

// A key revoked through the admin API stays revoked when a document that still lists it
// (without revoked: true) is applied again; a new value in the document is a new key.
func TestRevokedKeyStaysRevokedOnReapply(t *testing.T) {
	t.Parallel()
	s := open(t)
	ctx := context.Background()
	for _, tc := range []struct{ name, key, doc, value string }{
		{"given value", "k", `orgs: [{slug: a, projects: [{id: p, keys: [{name: k, value: sk_live_keepdead1, products: [email]}]}]}]`, "sk_live_keepdead1"},
		{"generated value", "g", `orgs: [{slug: a, projects: [{id: p, keys: [{name: g, kind: secret, products: [email]}]}]}]`, ""},
	} {
		rep := apply(t, s, []byte(tc.doc))
		value := tc.value
		if value == "" {
			value = rep.Generated[0].Value
		}
		if err := s.RevokeKey(ctx, "a", "p", tc.key); err != nil {
			t.Fatalf("%s: RevokeKey: %v", tc.name, err)
		}
		apply(t, s, []byte(tc.doc))
		if k, err := s.KeyByHash(ctx, auth.Hash(value)); err != nil || !k.Revoked {
			t.Errorf("%s: after re-apply KeyByHash = %+v, %v; want the key still revoked", tc.name, k, err)
		}
	}
	// A new value is a new key: it works.
	apply(t, s, []byte(`orgs: [{slug: a, projects: [{id: p, keys: [{name: k, value: sk_live_newlife1, products: [email]}]}]}]`))
	if k, err := s.KeyByHash(ctx, auth.Hash("sk_live_newlife1")); err != nil || k.Revoked {
		t.Errorf("rotated key = %+v, %v; want a live key", k, err)
	}
}

// Problems found by Validate carry the line of their entry too, and the file when the caller
// names it.
func TestProblemsHaveLines(t *testing.T) {
	t.Parallel()
	doc := "orgs:\n  - slug: a\n    projects:\n      - id: p\n        keys:\n          - {name: k, value: xx_bad, products: [forms]}\n"
	_, err := tenancy.Parse([]byte(doc))
	var inv *tenancy.InvalidError
	if !errors.As(err, &inv) || len(inv.Problems) == 0 {
		t.Fatalf("Parse = %v, want *InvalidError", err)
	}
	if p := inv.Problems[0]; p.Line != 6 || p.Path != "orgs[0].projects[0].keys[0]" {
		t.Errorf("problem = %+v, want line 6 at orgs[0].projects[0].keys[0]", p)
	}
	inv.File = "tenants.yaml"
	if !strings.Contains(inv.Error(), "tenants.yaml:6: orgs[0].projects[0].keys[0]: value must start with") {
		t.Errorf("Error() = %q", inv.Error())
	}
	_, err = tenancy.Parse([]byte(`{"orgs":[{"slug":"a","projects":"p"}]}`))
	if err == nil || !strings.Contains(err.Error(), "1: orgs[0].projects: must be a list") || strings.Contains(err.Error(), "tenancy.") {
		t.Errorf("Parse(wrong type) = %v, want a line, a path and no Go type name", err)
	}
}
