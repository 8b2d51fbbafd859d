//go:build !linux

package host

import "time"

// threadCPU falls back to the wall clock where the thread's CPU clock is
// not read (the scheduler then charges projects the wall time of calls).
func threadCPU() time.Duration { return monotonic() }
