package main

import (
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/edge/config"
)

// cgroupLimit512 makes a cgroup limited to 512 MB for the test (v2 when the machine mounts
// it with the memory controller, else v1) and returns its folder; it skips the test where the
// machine does not let it (not root, no writable cgroup filesystem).
func cgroupLimit512(t *testing.T) string {
	t.Helper()
	name := fmt.Sprintf("gatehouse-test-%d", os.Getpid())
	var dir, file string
	if raw, err := os.ReadFile("/sys/fs/cgroup/cgroup.controllers"); err == nil && strings.Contains(string(raw), "memory") {
		dir, file = filepath.Join("/sys/fs/cgroup", name), "memory.max"
	} else {
		dir, file = filepath.Join("/sys/fs/cgroup/memory", name), "memory.limit_in_bytes"
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Skipf("cannot create a cgroup here (%v): the cgroup-derived limit is covered by edge/membudget's tests on fake cgroup files", err)
	}
	t.Cleanup(func() { _ = os.Remove(dir) }) // after the process's own cleanup killed it
	if err := os.WriteFile(filepath.Join(dir, file), []byte("536870912"), 0o644); err != nil {
		t.Skipf("cannot set %s: %v", file, err)
	}
	return dir
}

// The real binary started in a 512 MB cgroup, with neither memory_limit_mb nor GOMEMLIMIT
// set, takes 90% of it as its memory budget and Go memory limit, logs it at start and shows it
// in /metrics with the caches' shares of it.
func TestCgroupDerivedMemoryLimit(t *testing.T) {
	cg := cgroupLimit512(t)
	// The process joins the cgroup before it becomes gatehouse: everything it allocates counts.
	wrapper := filepath.Join(t.TempDir(), "in-cgroup.sh")
	script := fmt.Sprintf("#!/bin/sh\necho $$ > %s/cgroup.procs || exit 1\nexec %s \"$@\"\n", cg, os.Args[0])
	if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	p := startBinEnv(t, wrapper, []string{"GOMEMLIMIT=", "GATEHOUSE_MEMORY_LIMIT_MB=0"}, "--data", t.TempDir())
	if !strings.Contains(p.stderr.String(), "cgroup_limit_mb=512") || !strings.Contains(p.stderr.String(), "source=cgroup") {
		t.Errorf("start-up log does not name the cgroup's limit: %s", p.stderr)
	}
	resp, err := http.Get(p.url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	const want = 460 << 20 // 90% of 512 MB
	for _, line := range []string{
		fmt.Sprintf(`gatehouse_memory_budget_bytes{source="cgroup"} %g`, float64(want)),
		// The Go heap gets the budget less the mapped files' quarter and the variant worker's
		// bound (a fifth of the budget, 96 MB at least, and its base), which shares the cgroup.
		fmt.Sprintf(`go_gc_gomemlimit_bytes %g`, float64(want-want/4>>20<<20-(96+24)<<20)),
		fmt.Sprintf(`gatehouse_memory_bound_bytes{part="variants"} %g`, float64(96<<20)),
		fmt.Sprintf(`gatehouse_memory_bound_bytes{part="badger_block_cache"} %g`, float64((want>>20)*7/40<<20)),
	} {
		if !strings.Contains(string(raw), line+"\n") {
			t.Errorf("/metrics lacks %q", line)
		}
	}
	p.stop(t)
}

// /metrics shows what each bounded part of memory holds now beside its bound
// (docs/performance.md, Footprint: the table of parts).
func TestMetricsShowWhatEachPartHolds(t *testing.T) {
	p := startProc(t, "--data", t.TempDir())
	resp, err := http.Get(p.url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, series := range []string{
		`gatehouse_memory_used_bytes{part="badger_block_cache"}`,
		`gatehouse_memory_used_bytes{part="badger_index_cache"}`,
		`gatehouse_memory_used_bytes{part="mapped_files"}`,
		`gatehouse_memory_used_bytes{part="plugins"}`,
		`gatehouse_memory_used_bytes{part="records_read_cache"}`,
		`gatehouse_memory_used_bytes{part="title_index"}`,
		`gatehouse_memory_used_records{part="records_hot"}`,
		`gatehouse_memory_used_records{part="journal_follower"}`,
		`gatehouse_memory_bound_bytes{part="badger_memtables"}`,
		`gatehouse_memory_bound_bytes{part="variants"}`,
	} {
		if !strings.Contains(string(raw), series+" ") {
			t.Errorf("/metrics lacks %s", series)
		}
	}
}

// files.variant_memory_mb: left at 0 it takes the budget's share (a fifth, at least 96 MB),
// set it wins; either way the returned configuration carries it and the shares show it.
func TestVariantMemoryFromTheBudget(t *testing.T) {
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1)) // memoryBudget sets the process's limit
	for _, tc := range []struct {
		budgetMB, configured, want int
	}{
		{200, 0, 96},
		{1000, 0, 200},
		{200, 300, 300},
	} {
		cfg := config.Default()
		cfg.MemoryLimitMB, cfg.Files.VariantMemoryMB = tc.budgetMB, tc.configured
		got, _, sh, err := memoryBudget(cfg, slog.New(slog.DiscardHandler))
		if err != nil {
			t.Fatal(err)
		}
		if got.Files.VariantMemoryMB != tc.want || sh.VariantsMB != tc.want {
			t.Errorf("budget %d MB, variant_memory_mb %d: config %d, share %d, want %d", tc.budgetMB, tc.configured, got.Files.VariantMemoryMB, sh.VariantsMB, tc.want)
		}
	}
}
