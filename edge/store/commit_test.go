package store

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// counter reads the 8-byte counter at k (0 when missing).
func counter(t *testing.T, db *DB, k string) uint64 {
	t.Helper()
	var n uint64
	err := db.View(context.Background(), func(tx *Txn) error {
		v, err := tx.Get([]byte(k))
		if errors.Is(err, ErrNotFound) {
			return nil
		}
		if err == nil {
			n = binary.BigEndian.Uint64(v)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// bump adds one to the counter at k: every caller reads and writes the same key.
func bump(tx *Txn, k string) error {
	var n uint64
	v, err := tx.Get([]byte(k))
	switch {
	case errors.Is(err, ErrNotFound):
	case err != nil:
		return err
	default:
		n = binary.BigEndian.Uint64(v)
	}
	return tx.Set([]byte(k), binary.BigEndian.AppendUint64(nil, n+1))
}

func TestBatchTooBigIsSplit(t *testing.T) {
	t.Parallel()
	db, err := Open(Options{InMemory: true, MemTableMB: 8})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	// Each Update alone fits (about 0.9 MB of a 1.2 MB limit, in values under the value log's
	// threshold, which count whole); two together do not.
	big := make([]byte, 60<<10)
	setBig := func(tx *Txn, prefix string) error {
		for j := 0; j < 15; j++ {
			if err := tx.Set([]byte(fmt.Sprintf("%s/%02d", prefix, j)), big); err != nil {
				return err
			}
		}
		return nil
	}
	var wg sync.WaitGroup
	for i := 0; i < 20; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			err := db.Update(context.Background(), func(tx *Txn) error { return setBig(tx, fmt.Sprintf("big/%02d", i)) })
			if err != nil {
				t.Errorf("Update big %d: %v", i, err)
			}
		}(i)
	}
	wg.Wait()
	n := 0
	_ = db.View(context.Background(), func(tx *Txn) error {
		return tx.Iterate(IterOptions{Prefix: []byte("big/"), KeysOnly: true}, func(_, _ []byte) (bool, error) { n++; return true, nil })
	})
	if n != 20*15 {
		t.Errorf("%d big values stored, want %d", n, 20*15)
	}
	// One Update that alone exceeds a commit is refused, and writes nothing.
	err = db.Update(context.Background(), func(tx *Txn) error {
		for i := 0; i < 3; i++ {
			if err := setBig(tx, fmt.Sprintf("huge/%d", i)); err != nil {
				return err
			}
		}
		return nil
	})
	if !errors.Is(err, ErrTooBig) {
		t.Errorf("Update of 2.7 MB = %v, want ErrTooBig", err)
	}
}

// Updates that fill several memtables (each change of write-ahead log makes the syncer sync
// them all) are all there after a reopen.
func TestDurableAcrossMemtableRotation(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db, err := Open(Options{Dir: dir, SyncWrites: true, MemTableMB: 8})
	if err != nil {
		t.Fatal(err)
	}
	val := make([]byte, 8000)
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				k := fmt.Sprintf("r/%d/%03d", g, i)
				if err := db.Update(context.Background(), func(tx *Txn) error { return tx.Set([]byte(k), val) }); err != nil {
					t.Errorf("Update %s: %v", k, err)
					return
				}
			}
		}(g)
	}
	wg.Wait()
	if db.SyncStats() == 0 {
		t.Errorf("no sync ran for durable Updates")
	}
	if n := reopenCount(t, db, dir, "r/", nil); n != 1600 {
		t.Errorf("%d of 1600 keys after reopen", n)
	}
}

// reopenCount closes db, opens dir again and counts the keys under prefix, each checked by
// check (when not nil).
func reopenCount(t *testing.T, db *DB, dir, prefix string, check func(k, v []byte) error) int {
	t.Helper()
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db, err := Open(Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	n := 0
	if err := db.View(context.Background(), func(tx *Txn) error {
		return tx.Iterate(IterOptions{Prefix: []byte(prefix)}, func(k, v []byte) (bool, error) {
			if check != nil {
				if err := check(k, v); err != nil {
					return false, err
				}
			}
			n++
			return true, nil
		})
	}); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestLogFilesInNumericOrder(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, name := range []string{"100000.mem", "99999.mem", "00007.mem", "000001.vlog", "000012.vlog", "MANIFEST", "000003.sst"} {
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	mems, vlogs, err := logFiles(dir)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(mems) != "[00007.mem 99999.mem 100000.mem]" || fmt.Sprint(vlogs) != "[000001.vlog 000012.vlog]" {
		t.Errorf("logFiles = %v %v", mems, vlogs)
	}
}

// A write badger refuses (an empty key) fails its own Update only; the others commit.
func TestRefusedWriteFailsItsUpdateOnly(t *testing.T) {
	t.Parallel()
	db, err := Open(Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var wg sync.WaitGroup
	for i := 0; i < 50; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			k := fmt.Sprintf("k/%02d", i)
			if i%10 == 3 {
				k = ""
			}
			err := db.Update(context.Background(), func(tx *Txn) error { return tx.Set([]byte(k), []byte("v")) })
			if (err != nil) != (k == "") {
				t.Errorf("Update(%q) = %v", k, err)
			}
		}(i)
	}
	wg.Wait()
	n := 0
	_ = db.View(context.Background(), func(tx *Txn) error {
		return tx.Iterate(IterOptions{Prefix: []byte("k/"), KeysOnly: true}, func(_, _ []byte) (bool, error) { n++; return true, nil })
	})
	if n != 45 {
		t.Errorf("%d keys written, want 45", n)
	}
}

// A group commit reports a write to the value log (a value of badger's threshold or more), so
// the syncer fsyncs that log only then; a big value is still there after a reopen.
func TestCommitReportsValueLogWrites(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db, err := Open(Options{Dir: dir, SyncWrites: true})
	if err != nil {
		t.Fatal(err)
	}
	c := db.e.(*badgerEngine).c
	big := make([]byte, c.valueThreshold)
	for _, tc := range []struct {
		name string
		val  []byte
		want bool
	}{
		{"small", []byte("v"), false},
		{"threshold", big, true},
	} {
		o := &op{fn: func(tx *Txn) error { return tx.Set([]byte("k/"+tc.name), tc.val) }, done: make(chan struct{})}
		if n, vlog := c.round([]*op{o}); n != 1 || o.err != nil || vlog != tc.want {
			t.Errorf("round(%s value) = %d, %v (err %v); want 1, %v", tc.name, n, vlog, o.err, tc.want)
		}
	}
	if err := db.Update(context.Background(), func(tx *Txn) error { return tx.Set([]byte("k/durable"), big) }); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db, err = Open(Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	err = db.View(context.Background(), func(tx *Txn) error {
		v, err := tx.Get([]byte("k/durable"))
		if err == nil && len(v) != len(big) {
			err = fmt.Errorf("%d bytes, want %d", len(v), len(big))
		}
		return err
	})
	if err != nil {
		t.Errorf("big value after reopen: %v", err)
	}
}

// The syncer trusts its last listing of badger's logs until the next memtable log appears,
// the value log is to be synced, or relist syncs have passed.
func TestWALListingFollowsNewLogs(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	touch := func(name string) {
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	touch("00007.mem")
	touch("000001.vlog")
	var w walState
	check := func(step string, vlog bool, wantMems, wantVlogs string) {
		t.Helper()
		mems, vlogs, err := w.logs(dir, vlog)
		if err != nil || fmt.Sprint(mems) != wantMems || fmt.Sprint(vlogs) != wantVlogs {
			t.Errorf("%s: logs = %v %v, %v; want %s %s", step, mems, vlogs, err, wantMems, wantVlogs)
		}
	}
	check("first", false, "[00007.mem]", "[000001.vlog]")
	touch("000002.vlog")
	check("new value log, memtable logs only", false, "[00007.mem]", "[000001.vlog]")
	check("new value log, value log to sync", true, "[00007.mem]", "[000001.vlog 000002.vlog]")
	touch("00008.mem")
	check("next memtable log", false, "[00007.mem 00008.mem]", "[000001.vlog 000002.vlog]")
	if err := os.Remove(filepath.Join(dir, "00007.mem")); err != nil {
		t.Fatal(err)
	}
	check("flushed log, before relist", false, "[00007.mem 00008.mem]", "[000001.vlog 000002.vlog]")
	for range relist {
		_, _, _ = w.logs(dir, false)
	}
	check("flushed log, after relist", false, "[00008.mem]", "[000001.vlog 000002.vlog]")
}

// The store opens badger with the base level of baseLevelMB, the memory knobs' defaults and the
// sizes asked for (Options).
func TestBadgerOptions(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		opts     Options
		memtable int64
	}{
		{Options{Dir: t.TempDir()}, DefaultMemTableMB << 20},
		{Options{Dir: t.TempDir(), MemTableMB: 8}, 8 << 20},
	} {
		db, err := Open(tc.opts)
		if err != nil {
			t.Fatal(err)
		}
		o := db.e.(*badgerEngine).bdb.Opts()
		if o.BaseLevelSize != baseLevelMB<<20 || o.MemTableSize != tc.memtable || o.BlockCacheSize != DefaultBlockCacheMB<<20 {
			t.Errorf("badger opened with base level %d, memtable %d, block cache %d", o.BaseLevelSize, o.MemTableSize, o.BlockCacheSize)
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// The largest record body the interface takes (1 MB of JSON) is written with its journal entry
// and a copy in one Update: its values go to the value log and count as pointers, so it fits a
// commit of the default memtable (before, 3.1 MB against its 2.4 MB limit: ErrTooBig).
func TestLargeValuesFitOneCommit(t *testing.T) {
	t.Parallel()
	db, err := Open(Options{Dir: t.TempDir(), MemTableMB: 8})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	body := bytes.Repeat([]byte("x"), 1<<20)
	err = db.Update(context.Background(), func(tx *Txn) error {
		for _, k := range []string{"rec/1", "copy/1"} {
			if err := tx.Set([]byte(k), body); err != nil {
				return err
			}
		}
		return tx.Journal([]byte("log/"), body)
	})
	if err != nil {
		t.Fatalf("Update of 3 MB of large values: %v", err)
	}
	_ = db.View(context.Background(), func(tx *Txn) error {
		v, err := tx.Get([]byte("rec/1"))
		if err != nil || !bytes.Equal(v, body) {
			t.Errorf("rec/1 read back %d bytes, %v", len(v), err)
		}
		return nil
	})
}

// UpdateUnsynced answers once committed, without a sync: its writes are visible at once,
// no sync runs for them, the next durable Update syncs them too (the value log included, for
// a value past badger's threshold), and all are there after a reopen.
func TestUpdateUnsynced(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db, err := Open(Options{Dir: dir, SyncWrites: true})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	big := bytes.Repeat([]byte("v"), badgerValueThreshold+1)
	syncs := db.SyncStats()
	for i := 0; i < 20; i++ {
		val := []byte("small")
		if i%2 == 1 {
			val = big
		}
		if err := db.UpdateUnsynced(ctx, func(tx *Txn) error { return tx.Set(fmt.Appendf(nil, "u/%02d", i), val) }); err != nil {
			t.Fatal(err)
		}
	}
	if got := db.SyncStats(); got != syncs {
		t.Errorf("%d syncs ran for unsynced Updates", got-syncs)
	}
	if err := db.View(ctx, func(tx *Txn) error { _, err := tx.Get([]byte("u/19")); return err }); err != nil {
		t.Errorf("an unsynced write read back at once: %v", err)
	}
	if err := db.Update(ctx, func(tx *Txn) error { return tx.Set([]byte("d/0"), []byte("durable")) }); err != nil {
		t.Fatal(err)
	}
	if db.SyncStats() == syncs {
		t.Errorf("no sync ran for the durable Update")
	}
	n := reopenCount(t, db, dir, "u/", func(k, v []byte) error {
		if len(v) != len("small") && !bytes.Equal(v, big) {
			return fmt.Errorf("%s holds %d bytes", k, len(v))
		}
		return nil
	})
	if n != 20 {
		t.Errorf("%d unsynced writes after a reopen, want 20", n)
	}
}
