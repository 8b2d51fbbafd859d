package memtrim

import (
	"syscall"
)

const supported = true

// dontNeed drops the process's page table entries of [start, end) (MADV_DONTNEED); on a
// file's shared mapping the pages stay in the page cache, dirty ones to be written back.
func dontNeed(start, end uintptr) error {
	_, _, errno := syscall.Syscall(syscall.SYS_MADVISE, start, end-start, syscall.MADV_DONTNEED)
	if errno != 0 {
		return errno
	}
	return nil
}
