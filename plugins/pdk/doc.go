// Package pdk is the Go plugin development kit for Gatehouse Wasm plugins.
//
// A plugin is a main package built with
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o myplugin.wasm .
//
// that registers its handlers in an init function (in c-shared mode the
// host runs package initialisers through _initialize and never calls main):
//
//	func init() {
//		pdk.OnFormSubmit(func(s pdk.Submission) pdk.Verdict {
//			if strings.Contains(s.Data.Get("message").Text(), "casino") {
//				return pdk.Reject("SPAM_DETECTED", "no gambling offers, please")
//			}
//			return pdk.Allow()
//		})
//	}
//
//	func main() {}
//
// The package hides the gatehouse_v1 ABI (see docs/plugins.md): it exports
// the ABI marker and one function per hook, pulls the input with
// input_read, pushes the verdict with output_write, and exposes the host
// functions as Config, Log and Fetch. Input documents are handed over as
// Value, a lazy view over the raw JSON: reading a field scans the bytes in
// place instead of decoding the whole document with encoding/json, which
// is what keeps a filter call in the tens of microseconds.
//
// Outside GOOS=wasip1 the host functions report ErrNoHost, so the package
// builds and documents everywhere, and TestCall runs a registered handler
// the way the host calls it, so a plugin's own `go test` runs natively.
//
// The PDK is a Go module of its own, github.com/gatehouse-dev/gatehouse/plugins/pdk,
// needing Go 1.24 and nothing but the standard library: `gatehouse plugins
// init` copies it into a new plugin folder and names it in a path replace,
// so a plugin builds with no access to the gateway's (unpublished) module.
package pdk
