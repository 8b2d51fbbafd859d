package ports

import (
	"testing"

	"github.com/gatehouse-dev/gatehouse/edge/module"
	"github.com/gatehouse-dev/gatehouse/plugins/host"
	"github.com/gatehouse-dev/gatehouse/products/email"
	"github.com/gatehouse-dev/gatehouse/products/files"
	"github.com/gatehouse-dev/gatehouse/products/forms"
	"github.com/gatehouse-dev/gatehouse/products/records"
)

// TestFor: each product finds the ports its interfaces declare, and none where the part they
// adapt is absent (no webhooks, no plugin host, no email module built yet).
func TestFor(t *testing.T) {
	h := &host.Host{}
	mail := &email.Service{}
	for _, tc := range []struct {
		name     string
		ps       module.Ports
		plugins  bool
		mailer   bool
		webhooks bool
	}{
		{"nothing wired", For(nil, nil, nil), false, false, false},
		{"plugins", For(nil, h, nil), true, false, false},
		{"email provided", For(nil, nil, module.Ports{mail}), false, true, false},
	} {
		if got := module.Port[forms.Plugins](tc.ps) != nil; got != tc.plugins {
			t.Errorf("%s: forms.Plugins found = %v, want %v", tc.name, got, tc.plugins)
		}
		if got := module.Port[records.ReadFilter](tc.ps) != nil; got != tc.plugins {
			t.Errorf("%s: records.ReadFilter found = %v, want %v", tc.name, got, tc.plugins)
		}
		if got := module.Port[email.SendHook](tc.ps) != nil; got != tc.plugins {
			t.Errorf("%s: email.SendHook found = %v, want %v", tc.name, got, tc.plugins)
		}
		if got := module.Port[forms.Mailer](tc.ps) != nil; got != tc.mailer {
			t.Errorf("%s: forms.Mailer found = %v, want %v", tc.name, got, tc.mailer)
		}
		if got := module.Port[forms.Webhooks](tc.ps) != nil; got != tc.webhooks {
			t.Errorf("%s: forms.Webhooks found = %v, want %v", tc.name, got, tc.webhooks)
		}
		// The events adapters tolerate a nil webhooks service (nothing is queued).
		if module.Port[email.Events](tc.ps) == nil || module.Port[files.Events](tc.ps) == nil {
			t.Errorf("%s: the email and files events ports are missing", tc.name)
		}
	}
}
