//go:build wasip1

// Command captcha-hmac is a captcha.verify plugin that checks a token
// offline: the token is "<expiry unix seconds>.<nonce>.<signature>", where
// signature is the unpadded base64url HMAC-SHA256 of "<expiry>.<nonce>"
// under the config key secret. A token is good when the signature matches
// and the expiry has not passed (by the clock the host gives the plugin).
//
// Offline tokens cannot be spent only once: pair this verifier with a short
// expiry. Config: secret (required).
package main

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/gatehouse-dev/gatehouse/plugins/pdk"
)

func init() {
	pdk.OnCaptchaVerify(func(c pdk.Captcha) (bool, error) {
		secret, ok := pdk.Config("secret")
		if !ok || secret == "" {
			return false, errors.New("captcha-hmac: config secret is not set")
		}
		parts := strings.Split(c.Token, ".")
		if len(parts) != 3 {
			return false, nil
		}
		expiry, err := strconv.ParseInt(parts[0], 10, 64)
		if err != nil || time.Now().Unix() > expiry {
			return false, nil
		}
		sig, err := base64.RawURLEncoding.DecodeString(parts[2])
		if err != nil {
			return false, nil
		}
		mac := hmac.New(sha256.New, []byte(secret))
		mac.Write([]byte(parts[0] + "." + parts[1]))
		return hmac.Equal(sig, mac.Sum(nil)), nil
	})
}

func main() {}
