package membership

import (
	"crypto/sha256"
	"encoding/base64"
	"strings"
)

// etagOf returns a strong, quoted entity tag for body: 16 bytes of its SHA-256, base64url.
func etagOf(body []byte) string {
	sum := sha256.Sum256(body)
	return `"` + base64.RawURLEncoding.EncodeToString(sum[:16]) + `"`
}

// noneMatch reports whether an If-None-Match header value matches etag, with the weak
// comparison RFC 9110 section 13.1.2 prescribes: "*" matches, and W/"x" matches "x".
// The header is a comma-separated list of entity tags; malformed members match nothing.
func noneMatch(header, etag string) bool {
	want := strings.TrimPrefix(etag, "W/")
	for header != "" {
		header = strings.TrimLeft(header, " \t,")
		if header == "" {
			break
		}
		if header[0] == '*' {
			return true
		}
		tag := header
		if strings.HasPrefix(tag, "W/") {
			tag = tag[2:]
		}
		if tag == "" || tag[0] != '"' {
			// Not an entity tag: skip to the next member.
			i := strings.IndexByte(header, ',')
			if i < 0 {
				return false
			}
			header = header[i+1:]
			continue
		}
		end := strings.IndexByte(tag[1:], '"')
		if end < 0 {
			return false
		}
		if tag[:end+2] == want {
			return true
		}
		header = tag[end+2:]
	}
	return false
}
