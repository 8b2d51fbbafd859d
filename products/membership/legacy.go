package membership

import (
	"github.com/gatehouse-dev/gatehouse/edge/store"
	"github.com/gatehouse-dev/gatehouse/edge/tenancy"
)

// LegacyConverters move the connections of tenancy's old layout (tenancy.MigrateLegacy) to this
// product's keys.
func LegacyConverters() map[string]tenancy.LegacyFunc {
	return map[string]tenancy.LegacyFunc{
		"connection": func(txn *store.Txn, p []string, v []byte) error {
			return tenancy.MoveLegacy(txn, connKey(p[0], p[1]), v, &Connection{})
		},
	}
}
