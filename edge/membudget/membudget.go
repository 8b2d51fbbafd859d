// Package membudget decides how much memory the gateway may use and how its caches share it.
// One budget is resolved at start (Resolve: memory_limit_mb, else GOMEMLIMIT, else 90% of the
// cgroup's memory limit, else a default fit for a small edge node), applied as the Go memory
// limit, and split (Split) into the bounds of every cache; the wiring in edge/cmd/gatehouse
// hands each owner its share, so no cache sizes itself from a global, and /metrics shows each
// bound (Register). Decisions.md 9.1.
package membudget

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// DefaultMB is the budget when nothing sets one (no memory_limit_mb, GOMEMLIMIT or cgroup
// limit): with it a node serving and importing a million records peaks under 300 MB of RSS
// (docs/performance.md, Footprint).
const DefaultMB = 200

// cgroupShare is the part of a cgroup's memory limit given to the Go memory limit: the rest
// is for what Go does not count (thread stacks, the binary's pages, page cache of the files
// the store maps).
const cgroupShare = 0.9

// minMB is the smallest budget Resolve accepts from a cgroup or GOMEMLIMIT; below it the
// caches would be too small to serve, and the limit only makes the collector run constantly.
const minMB = 64

// Source says where a budget came from.
type Source string

// The sources of a budget, in the order Resolve tries them.
const (
	FromConfig  Source = "memory_limit_mb"
	FromEnv     Source = "GOMEMLIMIT"
	FromCgroup  Source = "cgroup"
	FromDefault Source = "default"
)

// Budget is the memory the process may use, in MB, and where that figure came from.
type Budget struct {
	MB     int
	Source Source
	// CgroupMB is the cgroup's memory limit found (0: none), for the start-up log.
	CgroupMB int
}

// Inputs are what Resolve reads: the configured limit, the GOMEMLIMIT variable, and where the
// cgroup files are (CgroupRoot "/sys/fs/cgroup", SelfCgroup "/proc/self/cgroup"; a test points
// them at files of its own).
type Inputs struct {
	ConfigMB   int
	GoMemLimit string
	CgroupRoot string
	SelfCgroup string
}

// System returns the Inputs of this process: the configured limit, the environment's
// GOMEMLIMIT and the machine's cgroup files.
func System(configMB int) Inputs {
	return Inputs{ConfigMB: configMB, GoMemLimit: os.Getenv("GOMEMLIMIT"), CgroupRoot: "/sys/fs/cgroup", SelfCgroup: "/proc/self/cgroup"}
}

// Resolve returns the budget: the configured limit, else GOMEMLIMIT, else 90% of the cgroup's
// memory limit, else DefaultMB. An unreadable GOMEMLIMIT is an error (Go itself refuses to
// start with one); unreadable cgroup files mean no cgroup limit.
func Resolve(in Inputs) (Budget, error) {
	cg := 0
	if in.CgroupRoot != "" {
		if self, err := os.ReadFile(in.SelfCgroup); err == nil {
			cg = int(CgroupLimit(in.CgroupRoot, self) >> 20)
		}
	}
	switch {
	case in.ConfigMB > 0:
		return Budget{MB: in.ConfigMB, Source: FromConfig, CgroupMB: cg}, nil
	case in.GoMemLimit != "" && in.GoMemLimit != "off":
		b, err := parseGoMemLimit(in.GoMemLimit)
		if err != nil {
			return Budget{}, err
		}
		return Budget{MB: max(int(b>>20), minMB), Source: FromEnv, CgroupMB: cg}, nil
	case cg > 0:
		return Budget{MB: max(int(float64(cg)*cgroupShare), minMB), Source: FromCgroup, CgroupMB: cg}, nil
	}
	return Budget{MB: DefaultMB, Source: FromDefault}, nil
}

// parseGoMemLimit reads GOMEMLIMIT as Go does: a number of bytes with an optional B, KiB,
// MiB, GiB or TiB suffix.
func parseGoMemLimit(s string) (int64, error) {
	units := []struct {
		suffix string
		shift  uint
	}{{"TiB", 40}, {"GiB", 30}, {"MiB", 20}, {"KiB", 10}, {"B", 0}}
	num, shift := s, uint(0)
	for _, u := range units {
		if strings.HasSuffix(s, u.suffix) {
			num, shift = strings.TrimSuffix(s, u.suffix), u.shift
			break
		}
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("GOMEMLIMIT=%q: not a number of bytes (e.g. 256MiB)", s)
	}
	return n << shift, nil
}

// unlimited is the value from which a cgroup v1 limit means none (the kernel writes the
// largest multiple of the page size below 2^63).
const unlimited = int64(1) << 62

// CgroupLimit returns the smallest memory limit, in bytes, of the cgroups self (the content
// of /proc/self/cgroup) names and of their parents, read under root (where the cgroup
// filesystems are mounted: root/memory.max for cgroup v2, root/unified for a hybrid layout,
// root/memory/.../memory.limit_in_bytes for v1); 0 when none is set. A cgroup path that is not
// under root (a container sees its own cgroup as the mount's root) is walked up until it is.
func CgroupLimit(root string, self []byte) int64 {
	var limit int64
	take := func(v int64) {
		if v > 0 && v < unlimited && (limit == 0 || v < limit) {
			limit = v
		}
	}
	for _, line := range strings.Split(string(self), "\n") {
		parts := strings.SplitN(strings.TrimSpace(line), ":", 3)
		if len(parts) != 3 {
			continue
		}
		switch {
		case parts[0] == "0" && parts[1] == "": // v2
			for _, base := range []string{root, filepath.Join(root, "unified")} {
				walkUp(base, parts[2], "memory.max", take)
			}
		case hasController(parts[1], "memory"): // v1
			walkUp(filepath.Join(root, "memory"), parts[2], "memory.limit_in_bytes", take)
		}
	}
	return limit
}

func hasController(list, name string) bool {
	for _, c := range strings.Split(list, ",") {
		if c == name {
			return true
		}
	}
	return false
}

// walkUp reads file in base/path and in each of its parents up to base, giving each limit
// found to take ("max" and missing files are no limit).
func walkUp(base, path, file string, take func(int64)) {
	p := filepath.Clean("/" + path)
	for {
		if raw, err := os.ReadFile(filepath.Join(base, p, file)); err == nil {
			if v, err := strconv.ParseInt(strings.TrimSpace(string(raw)), 10, 64); err == nil {
				take(v)
			}
		}
		if p == "/" {
			return
		}
		p = filepath.Dir(p)
	}
}
