package pluginreg

import (
	"github.com/gatehouse-dev/gatehouse/edge/store"
	"github.com/gatehouse-dev/gatehouse/edge/tenancy"
)

// LegacyConverters move the plugin registrations and uploaded modules (bytes as they are) of
// tenancy's old layout (tenancy.MigrateLegacy) to this package's keys.
func LegacyConverters() map[string]tenancy.LegacyFunc {
	return map[string]tenancy.LegacyFunc{
		"plugin": func(txn *store.Txn, p []string, v []byte) error {
			return tenancy.MoveLegacy(txn, regKey(p[0], p[1]), v, &Plugin{})
		},
		"module": func(txn *store.Txn, p []string, v []byte) error {
			k := moduleKey(p[0], p[1])
			if ok, err := txn.Has(k); err != nil || ok {
				return err
			}
			return txn.Set(k, v)
		},
	}
}
