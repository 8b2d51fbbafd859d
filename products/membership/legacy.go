package membership

import (
	"github.com/gatehouse-dev/gatehouse/edge/legacy"
	"github.com/gatehouse-dev/gatehouse/edge/store"
)

// LegacyConverters move the connections of tenancy's old layout (legacy.Migrate) to this
// product's keys.
func LegacyConverters() []legacy.Converter {
	return []legacy.Converter{
		{Kind: "connection", Parts: 2, Move: func(txn *store.Txn, p []string, v []byte) error {
			return legacy.Move(txn, connKey(p[0], p[1]), v, &Connection{})
		}},
	}
}
