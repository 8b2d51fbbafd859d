package files_test

import (
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/gatehouse-dev/gatehouse/products/files"
)

// Builds in the worker process: every format comes back at its size, builds run in its lanes
// at once, the one process runs 10 nice levels below the gateway (Linux), and when it died
// the next build starts another.
func TestVariantWorkers(t *testing.T) {
	e := startService(t, "", nil, nil, func(o *files.Options) {
		o.VariantWorker, o.VariantSlots = workerCommand(), 2
	})
	id := e.upload(t, secret, "photo.jpg", "image/jpeg", photo(t, "photo.jpg"))
	want := func(opts map[string]any, w, h int) {
		t.Helper()
		r := e.Do("GET", signed(t, e, secret, id, opts), nil)
		if r.Status != 200 {
			t.Fatalf("variant %v: %d %s", opts, r.Status, r.Body)
		}
		m := decodeAny(t, r.Header.Get("Content-Type"), []byte(r.Body))
		if got := m.Bounds().Size(); got.X != w || got.Y != h {
			t.Fatalf("variant %v is %v, want %dx%d", opts, got, w, h)
		}
	}
	want(map[string]any{"width": 320, "format": "webp"}, 320, 200)
	want(map[string]any{"width": 100, "height": 100, "fit": "cover", "format": "avif"}, 100, 100)
	want(map[string]any{"width": 64, "format": "jpeg"}, 64, 40)
	done := make(chan [2]string, 4)
	for i := range 4 { // two lanes, four builds
		go get(signed(t, e, secret, id, map[string]any{"width": 40 + i, "format": "webp"}), done)
	}
	for range 4 {
		if r := <-done; r[0] != "200 OK" {
			t.Errorf("a concurrent variant = %v", r)
		}
	}
	pids := workerPids(t)
	if len(pids) != 1 {
		t.Fatalf("variant-worker processes %v, want one", pids)
	}
	if runtime.GOOS == "linux" {
		// This thread's nice value is the gateway's (the main thread's may not be: a worker
		// started from it leaves it lowered and parked).
		prio, err := syscall.Getpriority(syscall.PRIO_PROCESS, 0)
		if err != nil {
			t.Fatal(err)
		}
		want := min(19, 20-prio+10)
		for _, pid := range pids {
			if n := niceOf(t, pid); n != want {
				t.Errorf("worker %d runs at nice %d, want %d (10 below the gateway's)", pid, n, want)
			}
		}
	}
	for _, pid := range pids {
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
	}
	want(map[string]any{"width": 200, "format": "webp"}, 200, 125)
}

// workerPids are the variant workers among this process's children (Linux /proc).
func workerPids(t *testing.T) []int {
	t.Helper()
	lists, _ := filepath.Glob("/proc/self/task/*/children")
	var pids []int
	for _, l := range lists {
		b, _ := os.ReadFile(l)
		for _, f := range strings.Fields(string(b)) {
			pid, _ := strconv.Atoi(f)
			cmd, _ := os.ReadFile("/proc/" + f + "/cmdline")
			if strings.Contains(string(cmd), "variant-worker") {
				pids = append(pids, pid)
			}
		}
	}
	if len(lists) == 0 {
		t.Skip("no /proc here")
	}
	return pids
}

// niceOf reads a process's nice value from /proc/<pid>/stat (its 19th field).
func niceOf(t *testing.T, pid int) int {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+2:]))
	n, err := strconv.Atoi(f[16])
	if err != nil {
		t.Fatal(err)
	}
	return n
}
