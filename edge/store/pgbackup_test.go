package store

import (
	"bytes"
	"context"
	"fmt"
	"testing"
)

// FuzzScanBackup feeds arbitrary bytes to the backup stream reader the postgres backend's
// Load uses (a backup file is caller input): it returns an error or entries, never panics or
// allocates past its bound. The seeds are a real badger backup and damaged copies of it.
func FuzzScanBackup(f *testing.F) {
	db, err := Open(Options{InMemory: true})
	if err != nil {
		f.Fatal(err)
	}
	defer db.Close()
	if err := db.Update(context.Background(), func(tx *Txn) error {
		for i := 0; i < 20; i++ {
			if err := tx.Set([]byte(fmt.Sprintf("k/%02d", i)), []byte(fmt.Sprint(i))); err != nil {
				return err
			}
		}
		return tx.Delete([]byte("k/03"))
	}); err != nil {
		f.Fatal(err)
	}
	var buf bytes.Buffer
	if err := db.Backup(&buf); err != nil {
		f.Fatal(err)
	}
	raw := buf.Bytes()
	f.Add(raw)
	f.Add(raw[:len(raw)/2])
	f.Add(raw[:7])
	f.Add([]byte{})
	f.Add(append([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f}, raw...))
	f.Fuzz(func(t *testing.T, b []byte) {
		n := 0
		_ = scanBackup(bytes.NewReader(b), func(key, val []byte, del bool) error {
			n++
			return nil
		})
		if n > len(b) {
			t.Errorf("%d entries from %d bytes", n, len(b))
		}
	})
}
