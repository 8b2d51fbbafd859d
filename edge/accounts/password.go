package accounts

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"

	"golang.org/x/crypto/argon2"
)

// hasher hashes passwords with argon2id and writes the PHC string format
// ($argon2id$v=19$m=19456,t=2,p=1$<salt>$<hash>), so parameters can change later without
// invalidating stored hashes. The defaults are OWASP's argon2id minimum (19 MiB, 2 passes, 1
// lane): a sign-in costs tens of milliseconds, which with the throttle bounds guessing.
type hasher struct {
	memory  uint32 // KiB
	time    uint32
	threads uint8
	// dummy is a hash of a password nobody knows: unknown emails are checked against it, so a
	// wrong email costs the same time as a wrong password.
	dummy string
}

var defaultHasher = newHasher(19*1024, 2, 1)

func newHasher(memory, time uint32, threads uint8) hasher {
	h := hasher{memory: memory, time: time, threads: threads}
	d, err := h.hash(rand.Text())
	if err != nil {
		panic(err) // crypto/rand does not fail
	}
	h.dummy = d
	return h
}

const (
	saltLen = 16
	keyLen  = 32
)

var b64 = base64.RawStdEncoding

func (h hasher) hash(password string) (string, error) {
	salt := make([]byte, saltLen)
	if _, err := rand.Read(salt); err != nil {
		return "", err
	}
	key := argon2.IDKey([]byte(password), salt, h.time, h.memory, h.threads, keyLen)
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version, h.memory, h.time, h.threads,
		b64.EncodeToString(salt), b64.EncodeToString(key)), nil
}

var errBadHash = errors.New("accounts: malformed password hash")

// verify reports whether password matches a PHC argon2id string, in constant time.
func verify(encoded, password string) (bool, error) {
	parts := strings.Split(encoded, "$")
	if len(parts) != 6 || parts[1] != "argon2id" {
		return false, errBadHash
	}
	var version int
	if _, err := fmt.Sscanf(parts[2], "v=%d", &version); err != nil || version != argon2.Version {
		return false, errBadHash
	}
	var m, t uint32
	var p uint8
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &m, &t, &p); err != nil || m == 0 || t == 0 || p == 0 {
		return false, errBadHash
	}
	salt, err := b64.DecodeString(parts[4])
	if err != nil {
		return false, errBadHash
	}
	want, err := b64.DecodeString(parts[5])
	if err != nil || len(want) == 0 {
		return false, errBadHash
	}
	got := argon2.IDKey([]byte(password), salt, t, m, p, uint32(len(want)))
	return subtle.ConstantTimeCompare(got, want) == 1, nil
}
