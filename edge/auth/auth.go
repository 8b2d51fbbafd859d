// Package auth authenticates API keys on every product route: it reads the key from X-API-Key
// (or Authorization: Bearer where a product allows it), finds it by its SHA-256 hash through a
// cached lookup, and checks the kind, product and project scope each route declares.
package auth

import (
	"context"
	"crypto/subtle"

	"github.com/gatehouse-dev/gatehouse/edge/apikey"
)

// Lookup finds a key by the hex SHA-256 of its value. The tenancy package implements it
// (apikey.ErrUnknownKey for a hash it does not hold).
type Lookup interface {
	KeyByHash(ctx context.Context, hash string) (apikey.Key, error)
}

// sameHash compares two hex hashes in constant time.
func sameHash(a, b string) bool { return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1 }
