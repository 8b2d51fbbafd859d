package membudget

// Image variants are built in a worker process the gateway starts (products/files,
// `gatehouse variant-worker`), outside the gateway's Go heap but in its cgroup. Its builds
// running at once are bounded by Shares.VariantsMB (files.variant_memory_mb when set): a fifth
// of the budget, at least 96 MB and at most 256. At the default 200 MB budget that is 96 MB,
// of which the build pool hands 84 to builds (an eighth keeps recent decodes), so one build of
// a 16-megapixel original (a 4096 px square: its decoded pixels counted at 4 bytes, 64 MB, with
// the original and the output's buffers, about 73 MB) can run, or of a 12-megapixel photograph
// (about 60 MB) beside a small one; a larger source (up to files.variant_max_pixels) takes the
// whole share and runs alone.

// variantsMB is the variant builds' share of a budget of mb.
func variantsMB(mb int) int { return min(max(mb/5, 96), 256) }

// WorkerBaseMB is what the variant worker process holds besides its builds: the Go runtime
// and the encoders' compiled WebAssembly (22 MB of anonymous memory once they are compiled,
// measured with /proc/<pid>/status; its binary's pages are the gateway's file's).
const WorkerBaseMB = 24

// WorkerMB is the variant worker process's bound: its builds and its own base.
func (s Shares) WorkerMB() int { return s.VariantsMB + WorkerBaseMB }

// ShareWithWorker returns s for a gateway whose variant worker lives within the same memory
// limit: when the budget comes from the cgroup (which the worker process shares), the
// worker's bound comes out of the Go memory limit, so that the gateway and the worker
// together stay within the cgroup (at 512 MB: a budget of 460, the Go heap 225, the mapped
// files 115, the worker 120). The Go limit keeps at least a quarter of the budget. A budget
// from memory_limit_mb or GOMEMLIMIT is the gateway process's own, as it is without a limit.
func (s Shares) ShareWithWorker(b Budget) Shares {
	if b.Source == FromCgroup {
		s.GoLimitBytes = max(s.GoLimitBytes-int64(s.WorkerMB())<<20, int64(b.MB)<<20/4)
	}
	return s
}
