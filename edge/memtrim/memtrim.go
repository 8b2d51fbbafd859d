// Package memtrim bounds the page cache the process holds mapped. Badger reads and writes its
// tables and write-ahead logs through memory maps, so every page of the store the process has
// touched stays in its RSS (file-backed) until the kernel reclaims it, which on a machine with
// free memory it never does: at a million records that is hundreds of MB of RSS for pages the
// kernel would give back at once. The binary's own pages are the same: its code and read-only
// data (the embedded dashboard, the image codecs' WebAssembly) are 50 MB of RSS once touched,
// most of them once at start. A Trimmer checks the file-backed RSS every interval and, past
// its bound, drops the process's mappings of the store's files and of the binary's read-only
// segments (madvise MADV_DONTNEED): the pages stay in the page cache (a later read maps them
// back without reading the disk; a dirty page of a shared mapping is written back as before),
// they only stop counting against the process. Decisions.md 9.1; docs/performance.md,
// Footprint.
package memtrim

import (
	"bufio"
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gatehouse-dev/gatehouse/edge/procstat"
)

// defaultEvery is how often a Trimmer reads its RSS (one read of /proc/self/status, about 20
// µs, 0.1% of a core at this rate): the pages mapped between two checks are what it lets the
// RSS pass its bound by. Random reads over a million records map pages at up to 1 GB/s
// (every page fault maps the 64 KB around it), so at 50 ms the file-backed RSS passed its
// bound by up to 150 MB (make bench-footprint mix c: docs/performance.md, Footprint).
const defaultEvery = 20 * time.Millisecond

// Trimmer drops the process's mappings of the files under a folder when its file-backed RSS
// passes a bound. Constructed by New, it does nothing until Start.
type Trimmer struct {
	dir string
	// exe holds the binary's read-only segments that hold nothing but the file's pages, found
	// at Start (they do not move while the process runs).
	exe      []region
	maxBytes int64
	every    time.Duration
	log      *slog.Logger

	trims   atomic.Uint64
	dropped atomic.Int64
	stop    context.CancelFunc
	wg      sync.WaitGroup
}

// New returns a Trimmer of the files under dir that keeps the process's file-backed RSS under
// maxBytes, checked every interval (defaultEvery when 0).
func New(dir string, maxBytes int64, every time.Duration, log *slog.Logger) *Trimmer {
	if every <= 0 {
		every = defaultEvery
	}
	abs, err := filepath.Abs(dir)
	if err == nil {
		dir = abs
	}
	return &Trimmer{dir: filepath.Clean(dir) + string(filepath.Separator), maxBytes: maxBytes, every: every, log: log}
}

// Start begins the checks (none where the process cannot read /proc/self/status).
func (t *Trimmer) Start(context.Context) error {
	if _, err := os.Stat("/proc/self/status"); err != nil || !supported {
		return nil
	}
	t.exe = executableRegions()
	ctx, cancel := context.WithCancel(context.Background())
	t.stop = cancel
	t.wg.Add(1)
	go func() {
		defer t.wg.Done()
		tick := time.NewTicker(t.every)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				t.Check()
			}
		}
	}()
	return nil
}

// Stop ends the checks.
func (t *Trimmer) Stop(context.Context) error {
	if t.stop != nil {
		t.stop()
		t.wg.Wait()
	}
	return nil
}

// Stats reports how many times the mappings were dropped and the file-backed RSS those drops
// gave back, in bytes (for /metrics).
func (t *Trimmer) Stats() (trims uint64, dropped int64) { return t.trims.Load(), t.dropped.Load() }

// Check drops the mappings of the folder's files when the file-backed RSS is over the bound.
func (t *Trimmer) Check() {
	before := fileRSS()
	if before <= t.maxBytes {
		return
	}
	raw, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		return
	}
	for _, r := range append(mappingsUnder(raw, t.dir), t.exe...) {
		if err := dontNeed(r.start, r.end); err != nil && t.log != nil {
			t.log.Debug("memtrim: madvise", "err", err)
		}
	}
	t.trims.Add(1)
	if after := fileRSS(); after >= 0 && after < before {
		t.dropped.Add(before - after)
	}
}

// region is one mapping's address range.
type region struct{ start, end uintptr }

// mappingsUnder returns the mappings of /proc/self/maps (raw) whose file is under dir, but
// private writable ones, adjacent ones joined into one region. Badger's tables map side by side:
// at a million records 717 mappings made 17 regions, and each madvise call costs a TLB flush on
// every core running the process (one per mapping took a third of a core under populated reads,
// make bench-footprint mix c).
func mappingsUnder(raw []byte, dir string) []region {
	var out []region
	sc := bufio.NewScanner(bytes.NewReader(raw))
	for sc.Scan() {
		// 7f12a000-7f12b000 r--s 00000000 08:01 1234   /data/db/000012.sst
		f := strings.Fields(sc.Text())
		if len(f) < 6 || !strings.HasPrefix(f[5], dir) {
			continue
		}
		// A private writable mapping may hold changes of its own that dropping would lose.
		if len(f[1]) == 4 && f[1][3] == 'p' && f[1][1] == 'w' {
			continue
		}
		r, ok := parseRange(f[0])
		if !ok {
			continue
		}
		if n := len(out); n > 0 && out[n-1].end == r.start {
			out[n-1].end = r.end
			continue
		}
		out = append(out, r)
	}
	return out
}

// parseRange reads a mapping's address range as /proc/self/maps and smaps print it
// ("7f12a000-7f12b000"); ok is false when it is not one.
func parseRange(field string) (r region, ok bool) {
	lo, hi, found := strings.Cut(field, "-")
	if !found {
		return region{}, false
	}
	s, err1 := strconv.ParseUint(lo, 16, 64)
	e, err2 := strconv.ParseUint(hi, 16, 64)
	if err1 != nil || err2 != nil || e <= s {
		return region{}, false
	}
	return region{uintptr(s), uintptr(e)}, true
}

// executableRegions returns the running binary's mappings that Check may drop: those of
// its file that are not writable and hold no anonymous page (/proc/self/smaps; a page written
// before the mapping was made read-only, as a dynamic linker's relocations, would be lost).
// None where the binary or smaps cannot be read.
func executableRegions() []region {
	exe, err := os.Executable()
	if err != nil {
		return nil
	}
	if exe, err = filepath.EvalSymlinks(exe); err != nil {
		return nil
	}
	raw, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		return nil
	}
	return readOnlyMappingsOf(raw, exe)
}

// readOnlyMappingsOf returns the mappings of smaps (the text of /proc/self/smaps) whose file is
// path, not writable, with "Anonymous: 0 kB".
func readOnlyMappingsOf(smaps []byte, path string) []region {
	var out []region
	var cur region
	match := false
	sc := bufio.NewScanner(bytes.NewReader(smaps))
	for sc.Scan() {
		line := sc.Text()
		f := strings.Fields(line)
		if len(f) >= 5 && strings.Contains(f[0], "-") && !strings.HasSuffix(f[0], ":") {
			// A mapping's header: 00402000-019b9000 r-xp 00002000 fe:00 9978384 /usr/bin/gatehouse
			match = false
			if len(f) != 6 || f[5] != path || len(f[1]) != 4 || f[1][1] == 'w' {
				continue
			}
			cur, match = parseRange(f[0])
			continue
		}
		if match && len(f) >= 2 && f[0] == "Anonymous:" {
			if f[1] == "0" {
				out = append(out, cur)
			}
			match = false
		}
	}
	return out
}

// FileRSS reports the process's file-backed RSS in bytes (-1 when unknown), for /metrics.
func FileRSS() int64 { return fileRSS() }

// fileRSS reads the process's file-backed RSS (RssFile), in bytes; -1 when unknown.
func fileRSS() int64 {
	kb, ok := procstat.KB(0, "RssFile")
	if !ok {
		return -1
	}
	return kb << 10
}
