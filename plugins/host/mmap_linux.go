package host

import "golang.org/x/sys/unix"

// mapMemory maps n bytes of anonymous memory outside the Go heap; pages
// cost nothing until touched (MAP_NORESERVE). It falls back to the heap if
// the mapping fails. The returned func unmaps it.
func mapMemory(n uint64) ([]byte, func()) {
	b, err := unix.Mmap(-1, 0, int(n), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANON|unix.MAP_NORESERVE)
	if err != nil {
		return make([]byte, n), nil
	}
	return b, func() { _ = unix.Munmap(b) }
}
