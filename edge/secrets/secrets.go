// Package secrets keeps the server-wide random secrets the gateway signs with (the cursor key,
// the upload-URL and variant-URL keys) in the store, so that signatures survive a restart and
// every node of a deployment sharing the store signs alike. A secret is created on first use and
// never changes afterwards.
package secrets

import (
	"context"
	"crypto/rand"
	"errors"

	"github.com/gatehouse-dev/gatehouse/edge/store"
)

// key is where the secret name is kept: below "tenancy/meta/", where releases before this
// package stored it (tenancy kept the secrets then), so an existing data folder keeps its keys.
func key(name string) []byte { return store.Key("tenancy", "meta", name) }

// Get returns the secret of n random bytes stored under name, creating it on first use.
func Get(ctx context.Context, db *store.DB, name string, n int) ([]byte, error) {
	var out []byte
	err := db.Update(ctx, func(txn *store.Txn) error {
		v, err := txn.Get(key(name))
		if err == nil {
			out = v
			return nil
		}
		if !errors.Is(err, store.ErrNotFound) {
			return err
		}
		out = make([]byte, n)
		if _, err := rand.Read(out); err != nil {
			return err
		}
		return txn.Set(key(name), out)
	})
	return out, err
}
