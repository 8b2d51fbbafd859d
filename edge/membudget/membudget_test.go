package membudget

import (
	"os"
	"path/filepath"
	"testing"
)

// writeFiles lays out files (path -> content) under dir.
func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for p, c := range files {
		full := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestCgroupLimit(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		files map[string]string
		self  string
		want  int64
	}{
		{"v2 own cgroup", map[string]string{"memory.max": "max", "app/memory.max": "536870912"}, "0::/app\n", 512 << 20},
		{"v2 parent smaller", map[string]string{"a/memory.max": "268435456", "a/b/memory.max": "max"}, "0::/a/b", 256 << 20},
		{"v2 unlimited", map[string]string{"memory.max": "max\n"}, "0::/", 0},
		{"v2 namespaced root", map[string]string{"memory.max": "1073741824\n"}, "0::/", 1 << 30},
		{"v2 path not under root", map[string]string{"memory.max": "1073741824"}, "0::/kubepods/pod1/c1", 1 << 30},
		{"hybrid unified", map[string]string{"unified/svc/memory.max": "104857600"}, "0::/svc", 100 << 20},
		{"v1", map[string]string{"memory/memory.limit_in_bytes": "9223372036854771712", "memory/docker/x/memory.limit_in_bytes": "536870912"},
			"4:memory:/docker/x\n0::/\n", 512 << 20},
		{"v1 joint controllers", map[string]string{"memory/m/memory.limit_in_bytes": "300000000"}, "3:cpuacct,memory:/m", 300000000},
		{"v1 unlimited", map[string]string{"memory/memory.limit_in_bytes": "9223372036854771712"}, "4:memory:/", 0},
		{"none", map[string]string{}, "4:memory:/x\n0::/y", 0},
		{"garbage", map[string]string{"memory.max": "lots"}, "nonsense\n0::/", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			root := t.TempDir()
			writeFiles(t, root, tc.files)
			if got := CgroupLimit(root, []byte(tc.self)); got != tc.want {
				t.Errorf("CgroupLimit = %d, want %d", got, tc.want)
			}
		})
	}
}

func TestResolve(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	writeFiles(t, root, map[string]string{"memory.max": "536870912", "self": "0::/"})
	self := filepath.Join(root, "self")
	for _, tc := range []struct {
		name string
		in   Inputs
		want Budget
	}{
		{"config wins", Inputs{ConfigMB: 300, GoMemLimit: "100MiB", CgroupRoot: root, SelfCgroup: self}, Budget{MB: 300, Source: FromConfig, CgroupMB: 512}},
		{"GOMEMLIMIT next", Inputs{GoMemLimit: "100MiB", CgroupRoot: root, SelfCgroup: self}, Budget{MB: 100, Source: FromEnv, CgroupMB: 512}},
		{"GOMEMLIMIT bytes", Inputs{GoMemLimit: "209715200"}, Budget{MB: 200, Source: FromEnv}},
		{"GOMEMLIMIT GiB", Inputs{GoMemLimit: "1GiB"}, Budget{MB: 1024, Source: FromEnv}},
		{"GOMEMLIMIT tiny", Inputs{GoMemLimit: "1MiB"}, Budget{MB: minMB, Source: FromEnv}},
		{"GOMEMLIMIT off", Inputs{GoMemLimit: "off", CgroupRoot: root, SelfCgroup: self}, Budget{MB: 460, Source: FromCgroup, CgroupMB: 512}},
		{"cgroup 90%", Inputs{CgroupRoot: root, SelfCgroup: self}, Budget{MB: 460, Source: FromCgroup, CgroupMB: 512}},
		{"no cgroup file", Inputs{CgroupRoot: root, SelfCgroup: filepath.Join(root, "missing")}, Budget{MB: DefaultMB, Source: FromDefault}},
		{"nothing", Inputs{}, Budget{MB: DefaultMB, Source: FromDefault}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := Resolve(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("Resolve = %+v, want %+v", got, tc.want)
			}
		})
	}
	for _, bad := range []string{"lots", "-5MiB", "12XB", "MiB"} {
		if _, err := Resolve(Inputs{GoMemLimit: bad}); err == nil {
			t.Errorf("GOMEMLIMIT=%q accepted", bad)
		}
	}
}

func TestSplit(t *testing.T) {
	t.Parallel()
	for _, mb := range []int{64, 200, 460, 4096} {
		s := Budget{MB: mb}.Split()
		caches := s.BlockCacheMB + s.IndexCacheMB + s.MemTableMB*s.NumMemtables + int(s.ReadCacheBytes>>20) + s.HotRecords*hotRecordBytes>>20
		if mb >= 200 && caches > mb*6/10 {
			t.Errorf("budget %d MB: caches take %d MB, over 60%%", mb, caches)
		}
		if s.GoLimitBytes+int64(s.MappedMB)<<20 != int64(mb)<<20 || s.GoLimitBytes < int64(mb)<<19 || s.MemTableMB < 8 || s.HotRecords <= 0 || s.PluginsMB <= 0 {
			t.Errorf("budget %d MB: %+v", mb, s)
		}
	}
}
