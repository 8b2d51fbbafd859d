package host

import (
	"time"

	"golang.org/x/sys/unix"
)

// threadCPU is the CPU time the calling OS thread has used. The scheduler
// charges a project what its guests ran on the CPU, not the wall time of
// their calls, which a loaded machine inflates for every project alike.
func threadCPU() time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		return monotonic()
	}
	return time.Duration(ts.Nano())
}
