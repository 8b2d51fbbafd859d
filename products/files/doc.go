// Package files is the File-asset product: presigned image uploads, the signed PUT that streams
// bytes to blob storage while checking size, type, hash and dimensions, completion, duplicate
// checks by SHA-256, asset listing and reads, the public asset host ({asset_host}) and a
// sweeper of expired pending uploads.
//
// The public contract is the "File assets" section of the public REST interface; choices it
// leaves open are written down in docs/files.md. Fiber stays in api.go; Service takes context
// and plain values.
package files
