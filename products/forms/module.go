package forms

import (
	"context"
	"path/filepath"
	"strings"
	"time"

	"github.com/gatehouse-dev/gatehouse/edge"
	"github.com/gatehouse-dev/gatehouse/edge/embedhost"
	"github.com/gatehouse-dev/gatehouse/edge/module"
)

// Build builds the Forms product (module.Builder): its public routes and admin inbox, the
// embed host, and the service as a component: its Start removes the file parts an earlier run
// left in the spool folder {data}/tmp/forms, after the server listens (/readyz answers 503
// until it is done; submissions that arrive meanwhile spool under this run's own names), and
// runs the orphan sweep. What a submission triggers reaches the other parts through the
// ports forms declares: Plugins (forms.submit, plugin captchas), Webhooks and Mailer (the
// notification and auto-reply emails); each is nil, and skipped, when not given.
func Build(_ context.Context, d module.Deps) (module.Module, error) {
	rate := d.Config.Forms.RatePerMinute
	if rate <= 0 {
		rate = 60 // the interface's default, when forms.rate_per_minute is unset
	}
	o := Options{
		DB:            d.DB,
		Blobs:         d.Blobs,
		RatePerMinute: d.Config.Forms.RatePerMinute,
		Verifiers: NewVerifiers(VerifiersOptions{TurnstileURL: d.Config.Captcha.Turnstile.VerifyURL,
			HCaptchaURL: d.Config.Captcha.HCaptcha.VerifyURL, ReCaptchaURL: d.Config.Captcha.ReCaptcha.VerifyURL,
			Client: d.Egress.Client()}),
		Plugins:    module.Port[Plugins](d.Ports),
		Webhooks:   module.Port[Webhooks](d.Ports),
		Mailer:     module.Port[Mailer](d.Ports),
		AdminBase:  strings.TrimRight(d.Config.PublicURL, "/") + "/admin/v1",
		SpoolDir:   filepath.Join(d.Config.Data, "tmp", "forms"),
		Now:        d.Now,
		Log:        d.Log.With("product", "forms"),
		Registerer: d.Registerer,
	}
	if d.Limiter != nil {
		o.Limiter = d.Limiter("forms", rate, time.Minute)
	}
	svc, err := NewService(o)
	if err != nil {
		return module.Module{}, err
	}
	return module.Module{
		Name: "forms",
		API: []edge.Product{NewAPI(svc, d.Auth, d.Cursors, d.Config.TrustedProxies),
			embedhost.New(embedhost.Options{PublicURL: d.Config.PublicURL, EmbedURL: d.Config.EmbedHost, Auth: d.Auth})},
		Owner:      svc,
		Components: []module.Component{svc},
		Closers:    []func() error{svc.Close},
		Overview: func(ctx context.Context, _, project, since string) (any, error) {
			return svc.Overview(ctx, project, since)
		},
		Legacy: LegacyConverters(),
	}, nil
}
