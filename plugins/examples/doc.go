// Package examples holds real Gatehouse plugins, each in its own folder and
// built with build.sh (or by the tests). The Go ones are wasip1 main packages
// using the PDK:
//
//   - spamguard: forms.submit filter, blocked words and a link count
//   - redactor: records.read filter, removes fields, also inside relations
//   - captcha-hmac: captcha.verify, offline HMAC-signed tokens
//   - turnstile: captcha.verify, Cloudflare siteverify through http_fetch
//
// Three forms.submit word filters show the ABI from other languages, each
// built by the Makefile in its folder (docs/plugins.md has the guides):
//
//   - c-wordfilter: C, clang and wasi-libc, a WASI reactor
//   - wat-wordfilter: the WebAssembly text format by hand, wabt's wat2wasm
//   - assemblyscript-wordfilter: AssemblyScript, asc from npm
//
// This package itself has no code: it carries this description and
// TestPDKModule, which vets and tests the PDK's own module.
package examples
