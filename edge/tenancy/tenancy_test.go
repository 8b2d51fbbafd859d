package tenancy_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/edge/apikey"
	"github.com/gatehouse-dev/gatehouse/edge/edgetest/storetest"
	"github.com/gatehouse-dev/gatehouse/edge/store"
	"github.com/gatehouse-dev/gatehouse/edge/tenancy"
)

func open(t *testing.T) *tenancy.Service {
	t.Helper()
	db, err := storetest.Open(t, store.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	s, err := tenancy.NewService(tenancy.Options{DB: db})
	if err != nil {
		t.Fatal(err)
	}
	return s
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

const coreDoc = `
orgs:
  - slug: acme
    name: Acme
    keys: [{name: admin, value: sk_live_acme_admin, products: [email]}]
    projects:
      - id: demo
        keys:
          - {name: web, value: pk_live_demo_web, products: [forms, records]}
      - id: docs
`

func TestApplyTwice(t *testing.T) {
	t.Parallel()
	s := open(t)
	first := apply(t, s, []byte(coreDoc))
	if !first.Changed || first.Created != 5 {
		t.Fatalf("first apply: changed=%v created=%d, want 5 (org, 2 projects, 2 keys)", first.Changed, first.Created)
	}
	second := apply(t, s, []byte(coreDoc))
	if second.Changed || len(second.Changes) != 0 {
		t.Fatalf("second apply changed: %+v", second.Changes)
	}
	ctx := context.Background()
	k, err := s.KeyByHash(ctx, apikey.Hash("pk_live_demo_web"))
	if err != nil || k.Org != "acme" || k.Project != "demo" || k.Kind != apikey.Publishable || !k.HasProduct("records") {
		t.Fatalf("KeyByHash = %+v, %v", k, err)
	}
	if _, err := s.KeyByHash(ctx, apikey.Hash("pk_live_nope")); !errors.Is(err, apikey.ErrUnknownKey) {
		t.Errorf("unknown key: %v", err)
	}
	if p, err := s.Project(ctx, "docs"); err != nil || p.Org != "acme" {
		t.Errorf("Project(docs) = %+v, %v", p, err)
	}
	// The report names entities by path.
	var paths []string
	for _, c := range first.Changes {
		paths = append(paths, c.Kind+" "+c.Path())
	}
	want := "org acme,key acme/admin,project demo,key acme/demo/web,project docs"
	if got := strings.Join(paths, ","); got != want {
		t.Errorf("changes = %s, want %s", got, want)
	}
}

// A key no registered section owns is refused with its path.
func TestUnownedSectionRefused(t *testing.T) {
	t.Parallel()
	s := open(t)
	doc, err := tenancy.Parse([]byte(`orgs: [{slug: a, projects: [{id: p, forms: []}]}]`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Apply(context.Background(), doc); err == nil || !strings.Contains(err.Error(), `orgs[0].projects[0].forms: unknown key`) {
		t.Errorf("Apply(forms without a forms section) = %v, want the unknown key named", err)
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
		{"not yaml", "orgs: [", "document"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			// The keys of products' sections are judged by the service that knows them.
			_, err := open(t).Parse([]byte(tc.doc))
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
	apply(t, s, []byte(coreDoc))
	doc, err := tenancy.Parse([]byte(`orgs: [{slug: zeta, projects: [{id: zproj, keys: [{name: stolen, value: pk_live_demo_web, products: [forms]}]}]}]`))
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
	if _, err := s.Project(ctx, "zproj"); !errors.Is(err, tenancy.ErrNotFound) {
		t.Errorf("project of the refused document was written: %v", err)
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
	if _, err := s.KeyByHash(ctx, apikey.Hash(val)); err != nil {
		t.Errorf("generated key not found: %v", err)
	}
	// Giving the key a value rotates it: the old value stops working.
	apply(t, s, []byte(`orgs: [{slug: a, projects: [{id: p, keys: [{name: gen, value: sk_live_rotated1, products: [email]}]}]}]`))
	if _, err := s.KeyByHash(ctx, apikey.Hash(val)); !errors.Is(err, apikey.ErrUnknownKey) {
		t.Errorf("old value after rotation: %v", err)
	}
	g, err := s.CreateKey(ctx, tenancy.KeyRequest{Org: "a", Project: "p", Kind: "publishable", Products: []string{"forms"}})
	if err != nil || !strings.HasPrefix(g.Value, "pk_live_") {
		t.Fatalf("CreateKey = %+v, %v", g, err)
	}
	if err := s.RevokeKey(ctx, "a", "p", g.Name); err != nil {
		t.Fatal(err)
	}
	if k, _ := s.KeyByHash(ctx, apikey.Hash(g.Value)); !k.Revoked {
		t.Errorf("revoked key not marked")
	}
}

func TestPrune(t *testing.T) {
	t.Parallel()
	s := open(t)
	ctx := context.Background()
	apply(t, s, []byte(coreDoc))
	rep := apply(t, s, []byte(`prune: true
orgs: [{slug: acme, projects: [{id: demo, keys: [{name: web, value: pk_live_demo_web, products: [forms]}]}]}]`))
	if rep.Deleted != 2 {
		t.Fatalf("prune deleted %d, want 2 (project docs, key admin): %+v", rep.Deleted, rep.Changes)
	}
	if _, err := s.KeyByHash(ctx, apikey.Hash("sk_live_acme_admin")); !errors.Is(err, apikey.ErrUnknownKey) {
		t.Errorf("key survived prune: %v", err)
	}
	if _, err := s.Project(ctx, "docs"); !errors.Is(err, tenancy.ErrNotFound) {
		t.Errorf("project survived prune: %v", err)
	}
}

func FuzzParse(f *testing.F) {
	raw, err := os.ReadFile("../../configs/demo.tenants.yaml")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(raw)
	f.Add([]byte(`{"orgs":[{"slug":"a","keys":[{"name":"k","value":"pk_live_abcd","products":["forms"]}]}]}`))
	f.Add([]byte("prune: true\norgs: []"))
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
		// The document reads back as the same document (sections included, by key).
		raw, err := json.Marshal(doc)
		if err != nil {
			t.Fatalf("Marshal(parsed document): %v", err)
		}
		again, err := tenancy.Parse(raw)
		if err != nil {
			t.Fatalf("Parse(Marshal(doc)) = %v", err)
		}
		raw2, _ := json.Marshal(again)
		if string(raw) != string(raw2) {
			t.Fatalf("document changed through JSON:\n%s\n%s", raw, raw2)
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
		if k, err := s.KeyByHash(ctx, apikey.Hash(value)); err != nil || !k.Revoked {
			t.Errorf("%s: after re-apply KeyByHash = %+v, %v; want the key still revoked", tc.name, k, err)
		}
	}
	// A new value is a new key: it works.
	apply(t, s, []byte(`orgs: [{slug: a, projects: [{id: p, keys: [{name: k, value: sk_live_newlife1, products: [email]}]}]}]`))
	if k, err := s.KeyByHash(ctx, apikey.Hash("sk_live_newlife1")); err != nil || k.Revoked {
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
