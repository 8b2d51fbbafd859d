package forms

import (
	"github.com/gatehouse-dev/gatehouse/edge/store"
	"github.com/gatehouse-dev/gatehouse/edge/tenancy"
)

// LegacyConverters move the forms data of tenancy's old layout (tenancy.MigrateLegacy) to this
// product's keys: form definitions and the captcha keys the old project value held.
func LegacyConverters() map[string]tenancy.LegacyFunc {
	return map[string]tenancy.LegacyFunc{
		"form": func(txn *store.Txn, p []string, v []byte) error {
			return tenancy.MoveLegacy(txn, defKey(p[0], p[1]), v, &Form{})
		},
		"captcha": func(txn *store.Txn, p []string, v []byte) error {
			return tenancy.MoveLegacy(txn, captchaKey(p[0]), v, &CaptchaKeys{})
		},
	}
}
