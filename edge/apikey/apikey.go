// Package apikey is the API key model every part of the gateway shares: the kinds a key
// value's prefix gives, the key as stored (never its value, only its SHA-256), and its scope.
// It is free of HTTP: edge/tenancy stores keys and edge/auth checks them on requests, so
// tenancy, and every service that reads it, does not depend on fiber.
package apikey

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strings"
)

// Kind is a key's kind, given by its prefix.
type Kind string

// The key kinds.
const (
	Publishable Kind = "publishable"
	Secret      Kind = "secret"
)

// Key prefixes of the interface.
const (
	PrefixLive   = "pk_live_"
	PrefixTest   = "pk_test_"
	PrefixSecret = "sk_live_"
)

// Key is what the gateway knows of one API key; never its value.
type Key struct {
	// Hash is the hex SHA-256 of the key value.
	Hash string `json:"hash"`
	// Name is unique within the key's org and project.
	Name string `json:"name"`
	// Org is the owning organization's slug.
	Org string `json:"org"`
	// Project is the project id, or empty for an org-only key.
	Project  string   `json:"project,omitempty"`
	Kind     Kind     `json:"kind"`
	Test     bool     `json:"test,omitempty"`
	Products []string `json:"products"`
	Revoked  bool     `json:"revoked,omitempty"`
}

// HasProduct reports whether the key is scoped for product.
func (k *Key) HasProduct(product string) bool {
	for _, p := range k.Products {
		if p == product {
			return true
		}
	}
	return false
}

// SeesProject reports whether the key may read data of project (in org): an org-only key sees
// every project of its org, a project key only its own.
func (k *Key) SeesProject(org, project string) bool {
	return k.Org == org && (k.Project == "" || k.Project == project)
}

// Sentinel errors of the package.
var (
	// ErrUnknownKey is what tenancy (edge/auth's Lookup) answers for a hash it does not hold.
	ErrUnknownKey = errors.New("apikey: unknown key")
	// ErrMalformed reports a value that cannot be a key.
	ErrMalformed = errors.New("apikey: value must start with pk_live_, pk_test_ or sk_live_")
)

// Hash returns the hex SHA-256 of a key value: the only form keys are stored in.
func Hash(value string) string {
	s := sha256.Sum256([]byte(value))
	return hex.EncodeToString(s[:])
}

// KindOf returns the kind and test flag a key value's prefix gives, or ErrMalformed.
func KindOf(value string) (Kind, bool, error) {
	if len(value) > 256 {
		return "", false, ErrMalformed
	}
	var kind Kind
	test := false
	switch {
	case strings.HasPrefix(value, PrefixLive):
		kind = Publishable
	case strings.HasPrefix(value, PrefixTest):
		kind, test = Publishable, true
	case strings.HasPrefix(value, PrefixSecret):
		kind = Secret
	default:
		return "", false, ErrMalformed
	}
	rest := value[len(PrefixLive):]
	if len(rest) < 4 {
		return "", false, ErrMalformed
	}
	for _, r := range rest {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
			return "", false, ErrMalformed
		}
	}
	return kind, test, nil
}
