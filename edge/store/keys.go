package store

import (
	"bytes"

	"github.com/oklog/ulid/v2"
)

// Sep separates the parts of a key. Ids and slugs that go into keys never contain it
// (the tenants document validates them).
const Sep = '/'

// Key joins parts with Sep into a key: Key("forms", "sub", project, slug) = "forms/sub/<project>/<slug>".
func Key(parts ...string) []byte {
	n := len(parts)
	for _, p := range parts {
		n += len(p)
	}
	b := make([]byte, 0, n)
	for i, p := range parts {
		if i > 0 {
			b = append(b, Sep)
		}
		b = append(b, p...)
	}
	return b
}

// Prefix is Key with a trailing Sep, for scanning everything below parts.
func Prefix(parts ...string) []byte { return append(Key(parts...), Sep) }

// LastPart returns what follows the last Sep of key.
func LastPart(key []byte) string {
	i := bytes.LastIndexByte(key, Sep)
	return string(key[i+1:])
}

// NewID returns a new time-ordered id: 26 lower-case Crockford base32 characters that sort by
// creation time (millisecond), monotonic within one process.
func NewID() string {
	var b [ulid.EncodedSize]byte
	_ = ulid.Make().MarshalTextTo(b[:]) // fails only for a buffer of another size
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + ('a' - 'A')
		}
	}
	return string(b[:]) // one allocation, where String then ToLower made two
}
