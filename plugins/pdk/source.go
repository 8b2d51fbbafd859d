//go:build !wasip1

package pdk

import "embed"

// Source is the PDK's own source: its go.mod and Go files. `gatehouse
// plugins init` copies it into a new plugin folder (as gatehouse-pdk/, named
// by a path replace in the folder's go.mod), so the plugin builds with no
// module proxy and no access to the gateway's module. It exists outside
// GOOS=wasip1 only, so it never ends up inside a plugin.
//
//go:embed go.mod *.go
var Source embed.FS
