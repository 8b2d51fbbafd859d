package store

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// walState is what the syncer remembers of badger's logs. Badger writes each commit to the log
// of its current memtable (<dir>/NNNNN.mem, memory-mapped; values of 1 MB or more go to the
// value log, NNNNNN.vlog). The syncer fsyncs those files itself rather than calling badger's
// DB.Sync, which holds badger's lock while it syncs and so would stop every commit meanwhile
// (the pipeline would be gone). When a memtable fills, a new log starts; writes made to the
// old one since the last sync would stay unsynced until badger flushes that memtable to a
// table (which it syncs). So when the set of logs changed since either of the two previous
// syncs, syncAll fsyncs every log there is, and the folder; a write committed before a sync
// began is then durable whichever log holds it.
type walState struct {
	mu sync.Mutex
	// seen is the memtable logs at the previous sync; changed tells whether they differed
	// from the ones before.
	seen    []string
	changed bool
	// open keeps the logs synced so far open, by name (opening them each time costs more
	// than the sync of a quiet one).
	open map[string]*os.File
	// mems and vlogs are the last listing of the folder (listed tells whether there is one),
	// and unlisted counts the syncs that trusted it since (see logs).
	mems, vlogs []string
	listed      bool
	unlisted    int
}

// relist bounds the syncs that trust a listing, so logs badger flushed and removed are
// forgotten (their kept files closed) in time.
const relist = 256

// logs returns badger's memtable and value logs as syncLogs needs them. Listing the folder on
// every group commit cost a few percent of a write's CPU, on the syncer's one goroutine, so the
// last listing is trusted while the next memtable log does not exist: badger numbers them in
// sequence and creates a log before it writes to it, so a commit that returned before the
// check wrote to a log listed already. The folder is listed again when that log exists, when
// the value log is to be synced (a new value log has a number of its own), and every relist
// syncs.
func (w *walState) logs(dir string, vlog bool) (mems, vlogs []string, err error) {
	if w.listed && !vlog && w.unlisted < relist && len(w.mems) > 0 {
		next := fmt.Sprintf("%05d.mem", fileID(w.mems[len(w.mems)-1])+1)
		_, err := os.Lstat(filepath.Join(dir, next))
		if errors.Is(err, fs.ErrNotExist) {
			w.unlisted++
			return w.mems, w.vlogs, nil
		}
	}
	if mems, vlogs, err = logFiles(dir); err != nil {
		return nil, nil, err
	}
	w.mems, w.vlogs, w.listed, w.unlisted = mems, vlogs, true, 0
	return mems, vlogs, nil
}

// syncAll makes every commit that returned before the call durable.
func (c *committer) syncAll() error { return c.syncLogs(true) }

// syncLogs is syncAll for the commit loop's batches, which know whether they wrote to the
// value log: without vlog it is not synced (an fsync of a file with nothing to write still
// flushes the disk's cache, a device round trip on every group commit).
func (c *committer) syncLogs(vlog bool) error {
	c.wal.mu.Lock()
	defer c.wal.mu.Unlock()
	if c.dir == "" {
		return nil
	}
	mems, vlogs, err := c.wal.logs(c.dir, vlog)
	if err != nil {
		return err
	}
	changed := !slices.Equal(mems, c.wal.seen)
	sync := mems
	if !changed && !c.wal.changed && len(mems) > 0 {
		sync = mems[len(mems)-1:]
	}
	if vlog && len(vlogs) > 0 {
		sync = append(slices.Clip(sync), vlogs[len(vlogs)-1])
	}
	for _, name := range sync {
		if err := c.wal.fsync(c.dir, name); err != nil {
			return err
		}
	}
	c.wal.forget(mems, vlogs)
	if changed || c.wal.changed {
		if err := fsyncFile(c.dir); err != nil {
			return err
		}
	}
	c.wal.seen, c.wal.changed = mems, changed
	return nil
}

// fsync fsyncs the log name of dir through a kept file; one already gone (a log badger
// flushed and removed) is fine.
func (w *walState) fsync(dir, name string) error {
	f := w.open[name]
	if f == nil {
		var err error
		f, err = os.Open(filepath.Join(dir, name))
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		if w.open == nil {
			w.open = map[string]*os.File{}
		}
		w.open[name] = f
	}
	return datasync(f)
}

// forget closes the kept files of logs no longer listed.
func (w *walState) forget(lists ...[]string) {
	for name, f := range w.open {
		if !slices.ContainsFunc(lists, func(l []string) bool { return slices.Contains(l, name) }) {
			_ = f.Close()
			delete(w.open, name)
		}
	}
}

// close closes the kept files.
func (w *walState) close() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.forget()
}

// logFiles lists badger's memtable logs and value logs in dir, oldest first.
func logFiles(dir string) (mems, vlogs []string, err error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, nil, err
	}
	for _, e := range entries {
		switch name := e.Name(); {
		case strings.HasSuffix(name, ".mem"):
			mems = append(mems, name)
		case strings.HasSuffix(name, ".vlog"):
			vlogs = append(vlogs, name)
		}
	}
	byID := func(a, b string) int { return fileID(a) - fileID(b) }
	slices.SortFunc(mems, byID)
	slices.SortFunc(vlogs, byID)
	return mems, vlogs, nil
}

// fileID is the number a badger log is named by.
func fileID(name string) int {
	n, _ := strconv.Atoi(strings.TrimSuffix(name, filepath.Ext(name)))
	return n
}

// fsyncFile fsyncs a file or folder; one already gone (a log badger flushed and removed) is
// fine.
func fsyncFile(path string) error {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	serr := f.Sync()
	if cerr := f.Close(); serr == nil {
		serr = cerr
	}
	return serr
}
