module github.com/gatehouse-dev/gatehouse/plugins/pdk

// The PDK is a module of its own so that plugin authors can use it without
// the gateway's module (which is not published) and with an older Go: 1.24
// is the first release with //go:wasmexport. It depends on nothing but the
// standard library.
go 1.24
