// Package examples holds real Gatehouse plugins, each a wasip1 main package
// in its own folder, built with build.sh (or by the plugins/host tests):
//
//   - spamguard: forms.submit filter, blocked words and a link count
//   - redactor: records.read filter, removes fields, also inside relations
//   - captcha-hmac: captcha.verify, offline HMAC-signed tokens
//   - turnstile: captcha.verify, Cloudflare siteverify through http_fetch
//
// This package itself is empty; it exists to carry this description.
package examples
