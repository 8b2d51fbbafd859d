package email

import (
	"github.com/gatehouse-dev/gatehouse/edge/store"
	"github.com/gatehouse-dev/gatehouse/edge/tenancy"
)

// LegacyConverters move the email data of tenancy's old layout (tenancy.MigrateLegacy) to this
// product's keys: suppressions (with their source, reason and time), templates and the sender
// defaults the old project value held.
func LegacyConverters() map[string]tenancy.LegacyFunc {
	return map[string]tenancy.LegacyFunc{
		"suppress": func(txn *store.Txn, p []string, v []byte) error {
			return tenancy.MoveLegacy(txn, suppressKey(p[0], p[1]), v, &Suppression{})
		},
		"template": func(txn *store.Txn, p []string, v []byte) error {
			return tenancy.MoveLegacy(txn, templateKey(p[0], p[1]), v, &Template{})
		},
		"sender": func(txn *store.Txn, p []string, v []byte) error {
			return tenancy.MoveLegacy(txn, senderKey(p[0]), v, &Sender{})
		},
	}
}
