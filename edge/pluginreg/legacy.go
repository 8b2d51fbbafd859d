package pluginreg

import (
	"github.com/gatehouse-dev/gatehouse/edge/legacy"
	"github.com/gatehouse-dev/gatehouse/edge/store"
)

// LegacyConverters move the plugin registrations and uploaded modules (bytes as they are) of
// tenancy's old layout (legacy.Migrate) to this package's keys.
func LegacyConverters() []legacy.Converter {
	return []legacy.Converter{
		{Kind: "plugin", Parts: 2, Move: func(txn *store.Txn, p []string, v []byte) error {
			return legacy.Move(txn, regKey(p[0], p[1]), v, &Plugin{})
		}},
		{Kind: "module", Parts: 2, Move: func(txn *store.Txn, p []string, v []byte) error {
			k := moduleKey(p[0], p[1])
			if ok, err := txn.Has(k); err != nil || ok {
				return err
			}
			return txn.Set(k, v)
		}},
	}
}
