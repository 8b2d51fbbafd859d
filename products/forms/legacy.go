package forms

import (
	"github.com/gatehouse-dev/gatehouse/edge/legacy"
	"github.com/gatehouse-dev/gatehouse/edge/store"
)

// LegacyConverters move the forms data of tenancy's old layout (legacy.Migrate) to this
// product's keys: form definitions and the captcha keys the old project value held.
func LegacyConverters() []legacy.Converter {
	return []legacy.Converter{
		{Kind: "form", Parts: 2, Move: func(txn *store.Txn, p []string, v []byte) error {
			return legacy.Move(txn, defKey(p[0], p[1]), v, &Form{})
		}},
		{Kind: "captcha", Member: "captcha", Move: func(txn *store.Txn, p []string, v []byte) error {
			return legacy.Move(txn, captchaKey(p[0]), v, &CaptchaKeys{})
		}},
	}
}
