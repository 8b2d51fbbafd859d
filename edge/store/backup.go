package store

import (
	"fmt"
	"io"
)

// Backup writes a consistent snapshot of the database to w while it keeps serving: badger's
// backup stream of every live key as of one read timestamp, taken when Backup starts. Updates
// acknowledged before the call are in it; those committed meanwhile are not.
func (db *DB) Backup(w io.Writer) error {
	if _, err := db.bdb.Backup(w, 0); err != nil {
		return fmt.Errorf("store: backup: %w", err)
	}
	return nil
}

// Load writes the keys of a stream Backup produced into db (meant for an empty database:
// keys already there are overwritten), and makes them durable.
func (db *DB) Load(r io.Reader) error {
	if err := db.bdb.Load(r, 256); err != nil {
		return fmt.Errorf("store: load a backup: %w", err)
	}
	if err := db.bdb.Sync(); err != nil {
		return fmt.Errorf("store: load a backup: %w", err)
	}
	return nil
}
