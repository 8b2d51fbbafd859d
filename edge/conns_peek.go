//go:build linux || darwin || freebsd || netbsd || openbsd

package edge

import (
	"net"
	"syscall"
)

// pending reports whether request bytes wait in the kernel, not yet read by the server: such a
// connection is not quiet even though the server has read nothing from it yet. Control does
// not take the read lock a blocked Read holds, and MSG_DONTWAIT never waits.
func pending(c net.Conn) bool {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return false
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	var n int
	_ = rc.Control(func(fd uintptr) {
		var b [1]byte
		n, _, _ = syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
	})
	return n > 0
}
