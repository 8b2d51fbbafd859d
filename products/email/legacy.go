package email

import (
	"github.com/gatehouse-dev/gatehouse/edge/legacy"
	"github.com/gatehouse-dev/gatehouse/edge/store"
)

// LegacyConverters move the email data of tenancy's old layout (legacy.Migrate) to this
// product's keys: suppressions (with their source, reason and time), templates and the sender
// defaults the old project value held.
func LegacyConverters() []legacy.Converter {
	return []legacy.Converter{
		{Kind: "suppress", Parts: 2, Move: func(txn *store.Txn, p []string, v []byte) error {
			return legacy.Move(txn, suppressKey(p[0], p[1]), v, &Suppression{})
		}},
		{Kind: "template", Parts: 2, Move: func(txn *store.Txn, p []string, v []byte) error {
			return legacy.Move(txn, templateKey(p[0], p[1]), v, &Template{})
		}},
		{Kind: "sender", Member: "email", Move: func(txn *store.Txn, p []string, v []byte) error {
			return legacy.Move(txn, senderKey(p[0]), v, &Sender{})
		}},
	}
}
