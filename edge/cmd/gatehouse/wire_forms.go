package main

import (
	"context"
	"path/filepath"
	"strings"
	"time"

	"github.com/gatehouse-dev/gatehouse/edge/admin"
	"github.com/gatehouse-dev/gatehouse/edge/embedhost"
	"github.com/gatehouse-dev/gatehouse/products/forms"
)

// formsRate is forms.rate_per_minute, or the interface's 60 when unset.
func formsRate(n int) int {
	if n <= 0 {
		return 60
	}
	return n
}

// addForms wires the Forms product (public routes and the admin inbox) and the embed host. The
// service is a component: its Start removes the file parts an earlier run left in the spool
// folder, after the server listens (/readyz answers 503 until it is done); submissions that
// arrive meanwhile spool under this run's own names, which it leaves alone.
func (a *assembly) addForms(_ context.Context, d *deps) error {
	log := d.log.With("product", "forms")
	var hooks forms.Webhooks // nil (nothing queued) when the part it reaches is not wired
	if d.hooks != nil {
		hooks = formWebhooks{d.hooks}
	}
	var mailer forms.Mailer
	if a.mail != nil {
		mailer = formMailer{a.mail}
	}
	svc, err := forms.NewService(forms.Options{
		DB:            d.db,
		Blobs:         d.blobs,
		RatePerMinute: d.cfg.Forms.RatePerMinute,
		Limiter:       sharedLimiter(d, "forms", formsRate(d.cfg.Forms.RatePerMinute), time.Minute),
		Verifiers: forms.NewVerifiers(forms.VerifiersOptions{TurnstileURL: d.cfg.Captcha.Turnstile.VerifyURL,
			HCaptchaURL: d.cfg.Captcha.HCaptcha.VerifyURL, ReCaptchaURL: d.cfg.Captcha.ReCaptcha.VerifyURL,
			Client: d.egress.Client()}),
		Plugins:    formsPlugins{h: d.plugins},
		Webhooks:   hooks,
		Mailer:     mailer,
		AdminBase:  strings.TrimRight(d.cfg.PublicURL, "/") + "/admin/v1",
		SpoolDir:   filepath.Join(d.cfg.Data, "tmp", "forms"),
		Log:        log,
		Registerer: d.reg,
	})
	if err != nil {
		return err
	}
	a.closers = append(a.closers, svc.Close)
	if err := d.tenancy.Add(svc); err != nil {
		return err
	}
	a.products = append(a.products,
		forms.NewAPI(svc, d.auth, d.cursors, d.cfg.TrustedProxies),
		embedhost.New(embedhost.Options{PublicURL: d.cfg.PublicURL, EmbedURL: d.cfg.EmbedHost, Auth: d.auth}),
	)
	a.components = append(a.components, svc)
	a.overview = append(a.overview, admin.OverviewPart{Name: "forms", Read: func(ctx context.Context, q admin.OverviewQuery) (any, error) {
		return svc.Overview(ctx, q.Project, q.Since)
	}})
	return nil
}
