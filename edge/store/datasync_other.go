//go:build !linux

package store

import "os"

// datasync makes f's written data durable; outside Linux it is fsync (os.File.Sync).
func datasync(f *os.File) error { return f.Sync() }
