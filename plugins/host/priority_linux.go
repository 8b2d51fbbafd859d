package host

import "golang.org/x/sys/unix"

// lowerThreadPriority raises the nice value of the calling OS thread by
// backgroundNice (Linux schedules threads, and their nice values, one by
// one): the background compilation to machine code then takes the CPU
// that guest calls, requests and the interpreter's compilations leave.
// The caller has locked its goroutine to the thread and never unlocks it,
// so the thread ends with the goroutine instead of serving others.
func lowerThreadPriority() {
	tid := unix.Gettid()
	// The raw system call answers 20 - nice (1..40).
	cur, err := unix.Getpriority(unix.PRIO_PROCESS, tid)
	if err != nil {
		return
	}
	_ = unix.Setpriority(unix.PRIO_PROCESS, tid, min(20-cur+backgroundNice, 19))
}
