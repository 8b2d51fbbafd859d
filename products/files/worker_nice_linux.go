package files

import (
	"os/exec"
	"runtime"
	"syscall"
)

// startNiced starts cmd nice levels below the calling thread's priority (at most nice 19).
// Linux keeps a nice value per thread and a new process inherits its forking thread's: the
// start runs on a thread of its own, lowered first, which ends with its goroutine (never
// unlocked; were it the main thread, which Go never ends, Go parks it for good), so no other
// goroutine runs on it after, and Go starts no thread from a locked one.
//
// The worker also gets a process group of its own: a Ctrl-C at the gateway's terminal then
// reaches the gateway alone, which drains its requests (builds included) before it closes
// the worker; a worker whose gateway is gone ends at the end of its pipes.
func startNiced(cmd *exec.Cmd, nice int) error {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		// PRIO_PROCESS with who 0 names the calling thread on Linux; the raw getpriority
		// answers 20 - nice. A refusal leaves the worker at the gateway's priority: it still
		// runs, only unprioritised.
		if prio, err := syscall.Getpriority(syscall.PRIO_PROCESS, 0); err == nil {
			_ = syscall.Setpriority(syscall.PRIO_PROCESS, 0, min(19, 20-prio+nice))
		}
		errc <- cmd.Start()
	}()
	return <-errc
}
