package files

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"net/url"
	"strconv"
	"time"
)

// Grant is what an upload URL authorizes: bytes of exactly Size and type Type for AssetID,
// until Expires.
type Grant struct {
	AssetID string
	Size    int64
	Type    string
	Expires time.Time
}

// Signer signs and verifies upload URLs with HMAC-SHA256 over the asset id, size, content
// type and expiry (whole seconds).
type Signer struct{ key []byte }

// errBadSignature is any upload URL that does not verify; the API answers ErrURLInvalid.
var errBadSignature = errors.New("files: upload URL signature invalid")

// NewSigner returns a signer with key (at least 16 bytes, kept by the tenancy service).
func NewSigner(key []byte) (*Signer, error) {
	if len(key) < 16 {
		return nil, errors.New("files: upload URL key must have at least 16 bytes")
	}
	return &Signer{key: append([]byte(nil), key...)}, nil
}

func (s *Signer) mac(assetID string, size int64, typ string, exp int64) []byte {
	m := hmac.New(sha256.New, s.key)
	m.Write([]byte("gatehouse-upload-v1\x00" + assetID + "\x00" + strconv.FormatInt(size, 10) + "\x00" + typ + "\x00" + strconv.FormatInt(exp, 10)))
	return m.Sum(nil)
}

// Query returns the signed query string of g (without '?').
func (s *Signer) Query(g Grant) string {
	exp := g.Expires.Unix()
	q := url.Values{}
	q.Set("size", strconv.FormatInt(g.Size, 10))
	q.Set("type", g.Type)
	q.Set("exp", strconv.FormatInt(exp, 10))
	q.Set("sig", base64.RawURLEncoding.EncodeToString(s.mac(g.AssetID, g.Size, g.Type, exp)))
	return q.Encode()
}

// Verify checks the query of an upload URL for assetID at time now and returns its grant.
// A missing, repeated or malformed parameter, a wrong signature or an expired URL all fail.
func (s *Signer) Verify(assetID, rawQuery string, now time.Time) (Grant, error) {
	q, err := url.ParseQuery(rawQuery)
	if err != nil || len(rawQuery) > 2048 {
		return Grant{}, errBadSignature
	}
	one := func(k string) (string, bool) {
		v := q[k]
		return firstOf(v), len(v) == 1 && v[0] != ""
	}
	sizeS, ok1 := one("size")
	typ, ok2 := one("type")
	expS, ok3 := one("exp")
	sigS, ok4 := one("sig")
	if !ok1 || !ok2 || !ok3 || !ok4 {
		return Grant{}, errBadSignature
	}
	size, err1 := strconv.ParseInt(sizeS, 10, 64)
	exp, err2 := strconv.ParseInt(expS, 10, 64)
	sig, err3 := base64.RawURLEncoding.Strict().DecodeString(sigS)
	// The decoder skips line breaks: only the one canonical spelling of the signature counts.
	if err1 != nil || err2 != nil || err3 != nil || size < 0 || base64.RawURLEncoding.EncodeToString(sig) != sigS {
		return Grant{}, errBadSignature
	}
	// The canonical forms must round-trip, so one signature has one spelling.
	if strconv.FormatInt(size, 10) != sizeS || strconv.FormatInt(exp, 10) != expS {
		return Grant{}, errBadSignature
	}
	if !hmac.Equal(sig, s.mac(assetID, size, typ, exp)) {
		return Grant{}, errBadSignature
	}
	if now.Unix() >= exp {
		return Grant{}, errBadSignature
	}
	return Grant{AssetID: assetID, Size: size, Type: typ, Expires: time.Unix(exp, 0).UTC()}, nil
}

func firstOf(v []string) string {
	if len(v) == 0 {
		return ""
	}
	return v[0]
}
