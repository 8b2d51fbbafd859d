package main

import "testing"

// procsFor: max_procs wins, then the GOMAXPROCS variable (already applied by Go), else the
// cores but at least minProcs.
func TestProcsFor(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name              string
		configured, cores int
		envSet            bool
		want              int
	}{
		{"small node raised", 0, 2, false, minProcs},
		{"one core raised", 0, 1, false, minProcs},
		{"big node kept", 0, 16, false, 16},
		{"variable kept", 0, 2, true, 2},
		{"configured over variable", 3, 2, true, 3},
		{"configured under cores", 1, 8, false, 1},
	} {
		if got := procsFor(tc.configured, tc.cores, tc.envSet); got != tc.want {
			t.Errorf("%s: procsFor(%d, %d, %v) = %d, want %d", tc.name, tc.configured, tc.cores, tc.envSet, got, tc.want)
		}
	}
}
