//go:build !linux

package files

import "os/exec"

// startNiced starts cmd at the gateway's own priority: outside Linux the nice value belongs to
// the whole process, so lowering it to start a worker would lower the gateway too.
func startNiced(cmd *exec.Cmd, _ int) error { return cmd.Start() }
