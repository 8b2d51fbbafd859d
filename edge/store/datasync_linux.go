package store

import (
	"os"
	"syscall"
)

// datasync makes f's written data durable with fdatasync(2): the logs it syncs are files of
// a fixed, preallocated size (badger maps them), so the metadata fsync would add, the
// modification time, is not needed to read the data back, and leaving it out spares the
// file system a journal commit per sync.
func datasync(f *os.File) error {
	for {
		err := syscall.Fdatasync(int(f.Fd()))
		if err != syscall.EINTR {
			if err != nil {
				return &os.PathError{Op: "fdatasync", Path: f.Name(), Err: err}
			}
			return nil
		}
	}
}
