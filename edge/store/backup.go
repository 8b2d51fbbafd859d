package store

import (
	"fmt"
	"io"
)

// backup writes badger's backup stream of every live key as of one read timestamp, taken
// when it starts.
func (e *badgerEngine) backup(w io.Writer) error {
	if _, err := e.bdb.Backup(w, 0); err != nil {
		return fmt.Errorf("store: backup: %w", err)
	}
	return nil
}

// load takes a backup stream (badger's, or the postgres backend's in the same format) and
// syncs it.
func (e *badgerEngine) load(r io.Reader) error {
	// The load writes outside the committer: its hot keys are off meanwhile (hot.go).
	e.c.hot.fenceOn()
	defer e.c.hot.fenceOff()
	if err := e.bdb.Load(r, 256); err != nil {
		return fmt.Errorf("store: load a backup: %w", err)
	}
	if err := e.bdb.Sync(); err != nil {
		return fmt.Errorf("store: load a backup: %w", err)
	}
	return nil
}
