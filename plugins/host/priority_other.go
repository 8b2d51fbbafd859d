//go:build !linux

package host

// lowerThreadPriority does nothing where threads have no priority of their
// own that the host may set.
func lowerThreadPriority() {}
