package membudget

import "testing"

// The variant builds' share: a fifth of the budget within 96-256 MB; room for one build of a
// 4096 px square original at the default budget (about 60 MB, of the seven eighths the build
// pool hands out); and under a cgroup the gateway and its worker together within the budget,
// which is 90% of the cgroup's limit.
func TestVariantsShare(t *testing.T) {
	t.Parallel()
	const square4096 = 73 // MB: 4096x4096 at 4 bytes, a 2.6 MB original, the output's buffers
	for _, tc := range []struct {
		name         string
		b            Budget
		variants     int
		goLimitMB    int64 // after ShareWithWorker
		workerShared bool  // the worker's bound came out of the Go limit
	}{
		{"default", Budget{MB: DefaultMB, Source: FromDefault}, 96, 150, false},
		{"small config", Budget{MB: 64, Source: FromConfig}, 96, 32, false},
		{"cgroup 512 MB", Budget{MB: 460, Source: FromCgroup, CgroupMB: 512}, 96, 225, true},
		{"cgroup 256 MB", Budget{MB: 230, Source: FromCgroup, CgroupMB: 256}, 96, 57, true},
		{"cgroup 4 GB", Budget{MB: 3686, Source: FromCgroup, CgroupMB: 4096}, 256, 3686 - 921 - 280, true},
		{"GOMEMLIMIT 1 GB", Budget{MB: 1024, Source: FromEnv}, 204, 768, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			split := tc.b.Split()
			s := split.ShareWithWorker(tc.b)
			if s.VariantsMB != tc.variants || s.GoLimitBytes>>20 != tc.goLimitMB {
				t.Fatalf("variants %d MB, Go limit %d MB; want %d, %d", s.VariantsMB, s.GoLimitBytes>>20, tc.variants, tc.goLimitMB)
			}
			if s.VariantsMB*7/8 < square4096 {
				t.Errorf("the build pool gets %d MB: no room for one 4096 px square original", s.VariantsMB*7/8)
			}
			if tc.workerShared {
				if total := s.GoLimitBytes>>20 + int64(s.MappedMB) + int64(s.WorkerMB()); total > int64(tc.b.MB) && s.GoLimitBytes > int64(tc.b.MB)<<20/4 {
					t.Errorf("gateway and worker may hold %d MB of a %d MB budget", total, tc.b.MB)
				}
			} else if s.GoLimitBytes != split.GoLimitBytes {
				t.Errorf("a budget from %s lost the worker's bound from its Go limit", tc.b.Source)
			}
		})
	}
}
