package procstat

import (
	"os"
	"testing"
)

// The calling process's figures read by pid 0 and by its own pid; a missing line is not ok.
func TestKB(t *testing.T) {
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Skip("no /proc here")
	}
	for _, pid := range []int{0, os.Getpid()} {
		for _, field := range []string{"VmRSS", "VmHWM", "RssAnon", "RssFile"} {
			if kb, ok := KB(pid, field); !ok || (field != "RssFile" && kb <= 0) {
				t.Errorf("KB(%d, %s) = %d, %v", pid, field, kb, ok)
			}
		}
	}
	if _, ok := KB(0, "NoSuchLine"); ok {
		t.Error("a missing line read as ok")
	}
}
