package main

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/edge/apierr"
	"github.com/gatehouse-dev/gatehouse/edge/apikey"
	"github.com/gatehouse-dev/gatehouse/edge/blob"
	"github.com/gatehouse-dev/gatehouse/edge/pluginreg"
	"github.com/gatehouse-dev/gatehouse/edge/store"
	"github.com/gatehouse-dev/gatehouse/edge/tenancy"
	"github.com/gatehouse-dev/gatehouse/index/title"
	"github.com/gatehouse-dev/gatehouse/products/email"
	"github.com/gatehouse-dev/gatehouse/products/files"
	"github.com/gatehouse-dev/gatehouse/products/forms"
	"github.com/gatehouse-dev/gatehouse/products/membership"
	"github.com/gatehouse-dev/gatehouse/products/records"
)

// owners is tenancy with every product's section registered, as wire registers them, and the
// services that read what the sections stored.
type owners struct {
	ten     *tenancy.Service
	db      *store.DB
	email   *email.Service
	forms   *forms.Service
	records *records.Service
	member  *membership.Service
}

func newOwners(t testing.TB) *owners {
	t.Helper()
	db, err := store.Open(store.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	ten, err := tenancy.NewService(tenancy.Options{DB: db})
	if err != nil {
		t.Fatal(err)
	}
	o := &owners{ten: ten, db: db}
	if err := o.ten.Add(pluginreg.New(pluginreg.Options{DB: db, Tenancy: o.ten})); err != nil {
		t.Fatal(err)
	}
	if o.email, err = email.NewService(email.Options{DB: db, Tenancy: o.ten}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = o.email.Close() })
	if o.member, err = membership.NewService(membership.Options{DB: db}); err != nil {
		t.Fatal(err)
	}
	blobs, err := blob.NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if o.forms, err = forms.NewService(forms.Options{DB: db, Blobs: blobs}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = o.forms.Close() })
	titles, err := title.OpenMemory()
	if err != nil {
		t.Fatal(err)
	}
	if o.records, err = records.NewService(records.Options{DB: db, Tenancy: o.ten, Titles: titles}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = o.records.Close() })
	signer, err := files.NewSigner(make([]byte, 32))
	if err != nil {
		t.Fatal(err)
	}
	vsigner, err := files.NewVariantSigner(make([]byte, 32))
	if err != nil {
		t.Fatal(err)
	}
	fs, err := files.NewService(files.Options{DB: db, Blobs: blobs, Signer: signer, VariantSigner: vsigner})
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range []tenancy.Owner{o.email, o.member, o.forms, o.records, fs} {
		if err := o.ten.Add(x); err != nil {
			t.Fatal(err)
		}
	}
	return o
}

func (o *owners) parse(raw []byte) (*tenancy.Document, error) { return o.ten.Parse(raw) }

func (o *owners) apply(t *testing.T, raw []byte) *tenancy.Report {
	t.Helper()
	doc, err := o.parse(raw)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	rep, err := o.ten.Apply(context.Background(), doc)
	if err != nil {
		t.Fatalf("Apply: %v", err)
	}
	return rep
}

func demoTenants(t *testing.T) []byte {
	t.Helper()
	raw, err := os.ReadFile("../../../configs/demo.tenants.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// count lists the published records of a collection (at most 100) and counts them.
func (o *owners) count(project, coll string) (int, error) {
	page, err := o.records.List(context.Background(), records.Query{Project: project, Collection: coll, Secret: true, Limit: 100})
	return len(page.Items), err
}

func (o *owners) formDef(project, slug string) (forms.Definition, error) {
	return o.forms.Definition(context.Background(), project, slug)
}

func TestApplyDemoTwice(t *testing.T) {
	t.Parallel()
	o := newOwners(t)
	first := o.apply(t, demoTenants(t))
	if !first.Changed || first.Created < 30 {
		t.Fatalf("first apply: changed=%v created=%d", first.Changed, first.Created)
	}
	second := o.apply(t, demoTenants(t))
	if second.Changed || len(second.Changes) != 0 {
		t.Fatalf("second apply changed: %+v", second.Changes)
	}
	ctx := context.Background()
	k, err := o.ten.KeyByHash(ctx, apikey.Hash("pk_live_demo_web"))
	if err != nil || k.Org != "acme" || k.Project != "demo" || k.Kind != apikey.Publishable || !k.HasProduct("records") {
		t.Fatalf("KeyByHash = %+v, %v", k, err)
	}
	c, err := membership.Store{DB: o.db}.ActiveConnection(ctx, "demo")
	if err != nil || c.IdpInstanceDomain != "clerk.example.com" || c.IdpSecretKey == "" {
		t.Errorf("ActiveConnection = %+v, %v", c, err)
	}
	if _, err := (membership.Store{DB: o.db}).ActiveConnection(ctx, "docs"); !errors.Is(err, tenancy.ErrNotFound) {
		t.Errorf("docs ActiveConnection err = %v, want ErrNotFound", err)
	}
	if n, err := o.count("demo", "posts"); err != nil || n == 0 {
		t.Errorf("published records of demo/posts = %d, %v; want some", n, err)
	}
	f, err := o.formDef("demo", "contact")
	if err != nil || len(f.Fields) != 3 || f.Captcha != nil {
		t.Errorf("Definition(contact) = %+v, %v", f, err)
	}
	if ok, _ := o.email.IsSuppressed(ctx, "acme", "Blocked@Example.com"); !ok {
		t.Errorf("suppression not matched case-insensitively")
	}
}

func TestApplyReportsChange(t *testing.T) {
	t.Parallel()
	o := newOwners(t)
	o.apply(t, demoTenants(t))
	changed := strings.Replace(string(demoTenants(t)), "title: Contact us", "title: Contact", 1)
	rep := o.apply(t, []byte(changed))
	if !rep.Changed || rep.Updated != 1 || rep.Changes[0].Path() != "demo/contact" {
		t.Fatalf("report = %+v", rep)
	}
}

func TestInvalidSectionsNamePaths(t *testing.T) {
	t.Parallel()
	o := newOwners(t)
	for _, tc := range []struct{ name, doc, want string }{
		{"unknown project key", "orgs: [{slug: a,\n  projects: [{id: p, nope: 1}]}]", "2: orgs[0].projects[0].nope: unknown key"},
		{"unknown key inside a section", `orgs: [{slug: a, projects: [{id: p, forms: [{slug: f, nope: 1, fields: [{name: a, type: text}]}]}]}]`, "orgs[0].projects[0].forms[0].nope: unknown key"},
		{"relation target", `orgs: [{slug: a, projects: [{id: p, collections: [{name: c, fields: [{name: r, type: relation, collection: nope}]}]}]}]`, "orgs[0].projects[0].collections[0].fields[0].collection"},
		{"record value", `orgs: [{slug: a, projects: [{id: p, collections: [{name: c, fields: [{name: n, type: number}], records: [{id: r1, data: {n: "x"}}]}]}]}]`, "orgs[0].projects[0].collections[0].records[0].data.n"},
		{"idp key host", `orgs: [{slug: a, projects: [{id: p, membership: {connections: [{name: m, active: true, idpPublishableKey: pk_test_Y2xlcmsuZXhhbXBsZS5jb20k, idpInstanceDomain: other.example.org}]}}]}]`, "does not match idpInstanceDomain"},
		{"two active", `orgs: [{slug: a, projects: [{id: p, membership: {connections: [{name: m, active: true, idpPublishableKey: pk_test_Y2xlcmsuZXhhbXBsZS5jb20k, idpInstanceDomain: clerk.example.com}, {name: n, active: true, idpPublishableKey: pk_test_Y2xlcmsuZXhhbXBsZS5jb20k, idpInstanceDomain: clerk.example.com}]}}]}]`, "only one connection may be active"},
		{"form field type", `orgs: [{slug: a, projects: [{id: p, forms: [{slug: f, fields: [{name: x, type: blob}]}]}]}]`, "orgs[0].projects[0].forms[0].fields[0].type"},
		{"form captcha plugin", `orgs: [{slug: a, projects: [{id: p, forms: [{slug: f, captcha: {plugin: x}, fields: [{name: a, type: text}]}]}]}]`, "orgs[0].projects[0].forms[0].captcha.plugin"},
		{"plugin hook", `orgs: [{slug: a, projects: [{id: p, plugins: [{name: x, module: x.wasm, hooks: [nope]}]}]}]`, "orgs[0].projects[0].plugins[0].hooks[0]"},
		{"captcha keys", `orgs: [{slug: a, projects: [{id: p, captcha: {provider: turnstile}}]}]`, "orgs[0].projects[0].captcha"},
		{"template", `orgs: [{slug: a, projects: [{id: p, email: {templates: [{slug: t}]}}]}]`, "orgs[0].projects[0].email.templates[0]: subject and body are both required"},
		{"suppression", `orgs: [{slug: a, suppressions: [not-an-address]}]`, "orgs[0].suppressions[0]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := o.parse([]byte(tc.doc))
			var inv *tenancy.InvalidError
			if !errors.As(err, &inv) {
				t.Fatalf("Validate(%s) err = %v, want *InvalidError", tc.name, err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Validate(%s) = %v, want it to mention %q", tc.name, err, tc.want)
			}
		})
	}
}

// A document that validates but conflicts with stored state is refused whole: no product
// section wrote anything either.
func TestConflictAppliesNothing(t *testing.T) {
	t.Parallel()
	o := newOwners(t)
	o.apply(t, demoTenants(t))
	doc, err := o.parse([]byte(`orgs: [{slug: zeta, projects: [{id: zproj, forms: [{slug: f, published: true, fields: [{name: a, type: text}]}], keys: [{name: stolen, value: pk_live_demo_web, products: [forms]}]}]}]`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := o.ten.Apply(context.Background(), doc); err == nil || !strings.Contains(err.Error(), "already belongs to key acme/demo/web") {
		t.Fatalf("Apply with a taken key value = %v", err)
	}
	ctx := context.Background()
	if _, err := o.ten.Org(ctx, "zeta"); !errors.Is(err, tenancy.ErrNotFound) {
		t.Errorf("org of the refused document was written: %v", err)
	}
	if _, err := o.formDef("zproj", "f"); apierr.As(err).Code != forms.CodeFormNotFound {
		t.Errorf("form of the refused document was written: %v", err)
	}
}

func TestPruneSections(t *testing.T) {
	t.Parallel()
	o := newOwners(t)
	ctx := context.Background()
	o.apply(t, demoTenants(t))
	if err := o.email.Suppress(ctx, "acme", "bounced@example.com", "bounce", "550"); err != nil {
		t.Fatal(err)
	}
	rep := o.apply(t, []byte(`prune: true
orgs: [{slug: acme, projects: [{id: demo, keys: [{name: web, value: pk_live_demo_web, products: [forms]}]}]}]`))
	if rep.Deleted == 0 {
		t.Fatalf("prune deleted nothing")
	}
	if _, err := o.formDef("demo", "contact"); apierr.As(err).Code != forms.CodeFormNotFound {
		t.Errorf("form survived prune: %v", err)
	}
	if _, err := o.ten.KeyByHash(ctx, apikey.Hash("sk_live_demo_server")); !errors.Is(err, apikey.ErrUnknownKey) {
		t.Errorf("key survived prune: %v", err)
	}
	if ok, _ := o.email.IsSuppressed(ctx, "acme", "bounced@example.com"); !ok {
		t.Errorf("bounce suppression was pruned")
	}
	if ok, _ := o.email.IsSuppressed(ctx, "acme", "blocked@example.com"); ok {
		t.Errorf("document suppression survived prune")
	}
	if _, err := o.count("demo", "posts"); !errors.Is(err, records.ErrCollectionNotFound) {
		t.Errorf("collection survived prune: %v", err)
	}
	if _, err := (membership.Store{DB: o.db}).ActiveConnection(ctx, "demo"); !errors.Is(err, tenancy.ErrNotFound) {
		t.Errorf("connection survived prune: %v", err)
	}
}

// Records of the document are in the records store when Apply returns: written in the apply's
// transaction, not mirrored after it.
func TestDocumentRecordsInApplyTransaction(t *testing.T) {
	t.Parallel()
	o := newOwners(t)
	doc := `orgs: [{slug: a, projects: [{id: p, collections: [{name: c, public: true, fields: [{name: title, type: text}], records: [{id: r1, published: true, data: {title: one}}, {id: r2, published: true, data: {title: two}}]}]}]}]`
	o.apply(t, []byte(doc))
	if n, err := o.count("p", "c"); err != nil || n != 2 {
		t.Fatalf("Count after apply = %d, %v; want 2", n, err)
	}
	// Dropping a record from the document with prune deletes it (and its count) in the same way.
	o.apply(t, []byte("prune: true\n"+strings.Replace(doc, `, {id: r2, published: true, data: {title: two}}`, "", 1)))
	if n, err := o.count("p", "c"); err != nil || n != 1 {
		t.Fatalf("Count after pruning r2 = %d, %v; want 1", n, err)
	}
}

func FuzzValidateDocument(f *testing.F) {
	raw, err := os.ReadFile("../../../configs/demo.tenants.yaml")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(raw)
	f.Add([]byte(`orgs: [{slug: a, projects: [{id: p, forms: [{slug: f, captcha: {plugin: x}, fields: [{name: a, type: text}]}]}]}]`))
	f.Add([]byte("orgs: [{slug: a, projects: [{id: p, collections: [{name: c, fields: [{name: t, type: multiselect, options: [a]}], records: [{id: r, data: {t: [a, 1]}}]}]}]}]"))
	f.Add([]byte("orgs: [{slug: a, suppressions: [x@example.com], projects: [{id: p, email: {from: {email: a@b.c}}, membership: {connections: []}}]}]"))
	o := newOwners(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		_, err := o.parse(data)
		if err != nil {
			var inv *tenancy.InvalidError
			if !errors.As(err, &inv) && !errors.Is(err, tenancy.ErrTooLarge) {
				t.Fatalf("Parse/Validate error of unexpected type %T: %v", err, err)
			}
		}
	})
}
