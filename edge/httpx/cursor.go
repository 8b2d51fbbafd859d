package httpx

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
)

// Cursors signs and checks opaque pagination cursors. A cursor is the URL-safe base64 of the
// payload followed by a truncated HMAC-SHA256 over a scope and the payload: the scope binds it to
// one query (for example project, collection and the normalized filters), so a forged cursor or
// one from another query is refused with ErrInvalidCursor.
type Cursors struct{ key []byte }

const macLen = 16

// NewCursors returns a signer with the server's secret key (at least 16 bytes).
func NewCursors(key []byte) (*Cursors, error) {
	if len(key) < 16 {
		return nil, fmt.Errorf("httpx: cursor key must have at least 16 bytes, has %d", len(key))
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

// Decode checks cursor against scope and returns its payload, or ErrInvalidCursor.
func (c *Cursors) Decode(scope, cursor string) ([]byte, error) {
	if len(cursor) > 4096 {
		return nil, ErrInvalidCursor
	}
	raw, err := base64.RawURLEncoding.Strict().DecodeString(cursor)
	// The decoder skips line breaks: only the one canonical spelling is a cursor.
	if err != nil || len(raw) < macLen || base64.RawURLEncoding.EncodeToString(raw) != cursor {
		return nil, ErrInvalidCursor
	}
	payload, sum := raw[:len(raw)-macLen], raw[len(raw)-macLen:]
	if !hmac.Equal(sum, c.mac(scope, payload)) {
		return nil, ErrInvalidCursor
	}
	return payload, nil
}
