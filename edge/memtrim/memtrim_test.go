package memtrim

import (
	"os"
	"path/filepath"
	"reflect"
	"syscall"
	"testing"
)

func TestMappingsUnder(t *testing.T) {
	t.Parallel()
	maps := `55d0a000-55d0b000 r-xp 00000000 08:01 11 /usr/bin/gatehouse
7f000000-7f100000 r--s 00000000 08:01 12 /data/db/000012.sst
7f100000-7f200000 rw-s 00000000 08:01 13 /data/db/00001.mem
7f200000-7f300000 rw-p 00000000 08:01 14 /data/db/private.map
7f300000-7f400000 r--p 00000000 08:01 15 /data/title.bleve/store/x.zap
7f400000-7f500000 rw-p 00000000 00:00 0
7f500000-7f600000 r--s 00000000 08:01 16 /database/other.sst
garbage line
`
	got := mappingsUnder([]byte(maps), "/data/")
	// The .sst and .mem mappings lie side by side: one region; the private writable mapping
	// after them is left out, so the .zap mapping starts a region of its own.
	want := []region{{0x7f000000, 0x7f200000}, {0x7f300000, 0x7f400000}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("mappingsUnder = %x, want %x", got, want)
	}
}

// A mapped file under the folder, read whole, counts in the file-backed RSS; past the bound,
// Check drops it and the file's content reads the same afterwards.
func TestCheckDropsMappedPages(t *testing.T) {
	if !supported || fileRSS() < 0 {
		t.Skip("no /proc/self/status or madvise here")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "table.sst")
	const size = 32 << 20
	content := make([]byte, size)
	for i := range content {
		content[i] = byte(i / 4096)
	}
	if err := os.WriteFile(path, content, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m, err := syscall.Mmap(int(f.Fd()), 0, size, syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Munmap(m)
	sum := 0
	for i := 0; i < size; i += 4096 {
		sum += int(m[i])
	}
	before := fileRSS()
	tr := New(dir, 0, 0, nil)
	tr.Check()
	after := fileRSS()
	if trims, dropped := tr.Stats(); trims != 1 || dropped < size/2 || after > before-size/2 {
		t.Errorf("RssFile %d -> %d, stats %d trims %d bytes: the 32 MB mapping was not dropped", before, after, trims, dropped)
	}
	again := 0
	for i := 0; i < size; i += 4096 {
		again += int(m[i])
	}
	if again != sum {
		t.Errorf("the mapping reads differently after the trim")
	}
	// Under the bound nothing is dropped.
	tr = New(dir, 1<<50, 0, nil)
	tr.Check()
	if trims, _ := tr.Stats(); trims != 0 {
		t.Errorf("trimmed under the bound")
	}
}

// Only the binary's mappings that are neither writable nor hold anonymous pages are taken.
func TestReadOnlyMappingsOf(t *testing.T) {
	t.Parallel()
	smaps := `00400000-00402000 r--p 00000000 fe:00 11 /usr/bin/gatehouse
Size:                  8 kB
Anonymous:             0 kB
00402000-019b9000 r-xp 00002000 fe:00 11 /usr/bin/gatehouse
Size:              22236 kB
Rss:               22236 kB
Anonymous:             0 kB
019b9000-032e2000 r--p 015b9000 fe:00 11 /usr/bin/gatehouse
Anonymous:             4 kB
032e3000-035ec000 rw-p 02ee2000 fe:00 11 /usr/bin/gatehouse
Anonymous:             0 kB
7f000000-7f100000 r--p 00000000 fe:00 12 /usr/bin/gatehouse-old
Anonymous:             0 kB
7f100000-7f200000 r-xp 00000000 00:00 0
Anonymous:             0 kB
VmFlags: rd ex mr mw me
`
	got := readOnlyMappingsOf([]byte(smaps), "/usr/bin/gatehouse")
	want := []region{{0x400000, 0x402000}, {0x402000, 0x19b9000}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("readOnlyMappingsOf = %x, want %x", got, want)
	}
}

// The test binary's own code, once touched, leaves the RSS at a trim and runs on after it.
func TestCheckDropsExecutablePages(t *testing.T) {
	if !supported || fileRSS() < 0 {
		t.Skip("no /proc/self/status or madvise here")
	}
	tr := New(t.TempDir(), 0, 0, nil)
	tr.exe = executableRegions()
	if len(tr.exe) == 0 {
		t.Fatal("no read-only mapping of the test binary found")
	}
	before := fileRSS()
	tr.Check()
	if after := fileRSS(); after >= before {
		t.Errorf("RssFile %d -> %d: the binary's pages were not dropped", before, after)
	}
	if trims, _ := tr.Stats(); trims != 1 {
		t.Errorf("%d trims, want 1", trims)
	}
}
