//go:build !linux

package host

// mapMemory allocates n bytes on the Go heap where anonymous mappings are
// not used (only Linux maps guest memory outside the heap).
func mapMemory(n uint64) ([]byte, func()) { return make([]byte, n), nil }
