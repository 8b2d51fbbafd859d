// Package cursor signs and checks the opaque pagination cursors of every list route: one
// signer, one format, kept by the server's secret so cursors survive restarts. It is free of
// fiber: the handlers (api.go) of every product sign the position a service returns after a
// page and check the cursor a request brings before handing its position to the service.
package cursor

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"fmt"

	"github.com/gatehouse-dev/gatehouse/edge/apierr"
)

// Cursors signs and checks opaque pagination cursors. A cursor is the URL-safe base64 of the
// payload followed by a truncated HMAC-SHA256 over a scope and the payload: the scope binds it to
// one query (for example project, collection and the normalized filters), so a forged cursor or
// one from another query is refused with apierr.ErrInvalidCursor.
type Cursors struct{ key []byte }

const macLen = 16

// NewCursors returns a signer with the server's secret key (at least 16 bytes).
func NewCursors(key []byte) (*Cursors, error) {
	if len(key) < 16 {
		return nil, fmt.Errorf("cursor: cursor key must have at least 16 bytes, has %d", len(key))
	}
	return &Cursors{key: append([]byte(nil), key...)}, nil
}

func (c *Cursors) mac(scope string, payload []byte) []byte {
	m := hmac.New(sha256.New, c.key)
	m.Write([]byte(scope))
	m.Write([]byte{0})
	m.Write(payload)
	return m.Sum(nil)[:macLen]
}

// Encode returns the cursor for payload within scope.
func (c *Cursors) Encode(scope string, payload []byte) string {
	buf := make([]byte, 0, len(payload)+macLen)
	buf = append(buf, payload...)
	buf = append(buf, c.mac(scope, payload)...)
	return base64.RawURLEncoding.EncodeToString(buf)
}

// Decode checks cursor against scope and returns its payload, or apierr.ErrInvalidCursor.
func (c *Cursors) Decode(scope, cursor string) ([]byte, error) {
	if len(cursor) > 4096 {
		return nil, apierr.ErrInvalidCursor
	}
	raw, err := base64.RawURLEncoding.Strict().DecodeString(cursor)
	// The decoder skips line breaks: only the one canonical spelling is a cursor.
	if err != nil || len(raw) < macLen || base64.RawURLEncoding.EncodeToString(raw) != cursor {
		return nil, apierr.ErrInvalidCursor
	}
	payload, sum := raw[:len(raw)-macLen], raw[len(raw)-macLen:]
	if !hmac.Equal(sum, c.mac(scope, payload)) {
		return nil, apierr.ErrInvalidCursor
	}
	return payload, nil
}
