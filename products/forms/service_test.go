package forms_test

import (
	"context"
	"errors"
	"testing"

	"github.com/gatehouse-dev/gatehouse/edge/apierr"
	"github.com/gatehouse-dev/gatehouse/edge/blob"
	"github.com/gatehouse-dev/gatehouse/edge/edgetest/storetest"
	"github.com/gatehouse-dev/gatehouse/edge/journal"
	"github.com/gatehouse-dev/gatehouse/edge/pluginreg"
	"github.com/gatehouse-dev/gatehouse/edge/store"
	"github.com/gatehouse-dev/gatehouse/edge/tenancy"
	"github.com/gatehouse-dev/gatehouse/products/forms"
)

const pluginTenants = `
orgs:
  - slug: acme
    projects:
      - id: demo
        keys:
          - {name: web, value: pk_live_demo_web, products: [forms]}
        plugins:
          - {name: checker, module: checker.wasm, hooks: [captcha.verify]}
        forms:
          - {slug: plain, published: true, fields: [{name: note, type: text}]}
          - {slug: plugged, published: true, captcha: {plugin: checker}, fields: [{name: note, type: text}]}
`

// newService builds the service over a real badger in a temp folder, without HTTP.
func newService(t *testing.T, doc string, edit func(*forms.Options)) (*forms.Service, *store.DB) {
	t.Helper()
	db, err := storetest.Open(t, store.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	blobs, err := blob.NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	o := forms.Options{DB: db, Blobs: blobs}
	if edit != nil {
		edit(&o)
	}
	svc, err := forms.NewService(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = svc.Close() })
	ten, err := tenancy.NewService(tenancy.Options{DB: db})
	if err != nil {
		t.Fatal(err)
	}
	join(t, ten, svc)
	d, err := tenancy.Parse([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ten.Apply(context.Background(), d); err != nil {
		t.Fatal(err)
	}
	return svc, db
}

type filterFunc func(context.Context, forms.FilterInput) (map[string]any, error)

func (f filterFunc) FilterSubmission(ctx context.Context, in forms.FilterInput) (map[string]any, error) {
	return f(ctx, in)
}

// CaptchaVerifier completes forms.Plugins: a filter alone provides no captcha.
func (f filterFunc) CaptchaVerifier(context.Context, string, string) (forms.Verifier, error) {
	return nil, errors.New("no such plugin")
}

type verifierFunc func(context.Context, forms.Challenge) (forms.Verdict, error)

func (f verifierFunc) Verify(ctx context.Context, ch forms.Challenge) (forms.Verdict, error) {
	return f(ctx, ch)
}

type plugins map[string]forms.Verifier

// FilterSubmission completes forms.Plugins: captcha plugins alone keep the data as it is.
func (p plugins) FilterSubmission(context.Context, forms.FilterInput) (map[string]any, error) {
	return nil, nil
}

func (p plugins) CaptchaVerifier(_ context.Context, _, name string) (forms.Verifier, error) {
	v, ok := p[name]
	if !ok {
		return nil, errors.New("no such plugin")
	}
	return v, nil
}

func TestFilter(t *testing.T) {
	t.Parallel()
	reject := apierr.New(422, "SPAM", "looks like spam", nil)
	svc, _ := newService(t, pluginTenants, func(o *forms.Options) {
		o.Plugins = filterFunc(func(_ context.Context, in forms.FilterInput) (map[string]any, error) {
			if in.Data["note"] == "casino" {
				return nil, reject
			}
			return map[string]any{"note": "[redacted]"}, nil
		})
	})
	ctx := context.Background()
	in := func(note string) forms.Input {
		return forms.Input{Project: "demo", Slug: "plain", KeyHash: "k", Values: map[string]any{"note": note}}
	}
	if _, err := svc.Submit(ctx, in("casino")); !errors.Is(err, reject) {
		t.Errorf("Submit(casino) = %v, want the filter's rejection", err)
	}
	r, err := svc.Submit(ctx, in("hello"))
	if err != nil {
		t.Fatal(err)
	}
	sub, err := svc.Get(ctx, "demo", "plain", r.ID)
	if err != nil || sub.Data["note"] != "[redacted]" {
		t.Errorf("stored %v, %v; want the filter's rewrite", sub.Data, err)
	}
}

func TestPluginCaptcha(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	in := func(token string) forms.Input {
		return forms.Input{Project: "demo", Slug: "plugged", KeyHash: "k", IP: "192.0.2.1",
			Values: map[string]any{"note": "x", "captcha-response": token}}
	}
	// No plugin host wired: 503.
	svc, _ := newService(t, pluginTenants, nil)
	if _, err := svc.Submit(ctx, in("ok")); apierr.As(err).Code != forms.CodeCaptchaNotConfigured {
		t.Errorf("Submit without a plugin host = %v, want CAPTCHA_NOT_CONFIGURED", err)
	}
	var got forms.Challenge
	svc, _ = newService(t, pluginTenants, func(o *forms.Options) {
		o.Plugins = plugins{"checker": verifierFunc(func(_ context.Context, ch forms.Challenge) (forms.Verdict, error) {
			got = ch
			return forms.Verdict{Success: ch.Token == "ok"}, nil
		})}
	})
	if _, err := svc.Submit(ctx, in("ok")); err != nil {
		t.Errorf("Submit with a passing plugin = %v", err)
	}
	if got.Token != "ok" || got.RemoteIP != "192.0.2.1" || got.Project != "demo" || got.Form != "plugged" {
		t.Errorf("plugin got %+v", got)
	}
	if _, err := svc.Submit(ctx, in("no")); apierr.As(err).Code != forms.CodeCaptchaFailed {
		t.Errorf("Submit with a failing plugin = %v, want CAPTCHA_FAILED", err)
	}
	def, err := svc.Definition(ctx, "demo", "plugged")
	if err != nil || def.Captcha == nil || def.Captcha.Provider != "plugin" {
		t.Errorf("Definition(plugged) = %+v, %v", def, err)
	}
}

func TestInvalidateOnChange(t *testing.T) {
	t.Parallel()
	svc, _ := newService(t, pluginTenants, nil)
	ctx := context.Background()
	if _, err := svc.Definition(ctx, "demo", "plain"); err != nil {
		t.Fatal(err)
	}
	// The form stays cached until a change of it; tenancy's OnChange calls Changed.
	svc.Changed(ctx, []journal.Change{{Op: "deleted", Kind: "form", Project: "demo", Name: "nope"}})
	if _, err := svc.Definition(ctx, "demo", "nope"); apierr.As(err).Code != forms.CodeFormNotFound {
		t.Errorf("Definition(nope) = %v", err)
	}
}

// join registers the forms sections (and the plugins section the documents use) with ten, as
// edge/cmd/gatehouse does.
func join(t testing.TB, ten *tenancy.Service, svc *forms.Service) {
	t.Helper()
	if err := ten.Add(svc); err != nil {
		t.Fatal(err)
	}
	if err := ten.Register(pluginreg.Section{}); err != nil {
		t.Fatal(err)
	}
}
