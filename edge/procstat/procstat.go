// Package procstat reads a process's memory figures from Linux's /proc/<pid>/status, the one
// parser the memory trimmer and the benchmark commands share (VmRSS, VmHWM, RssAnon, RssFile).
package procstat

import (
	"os"
	"strconv"
	"strings"
)

// KB returns the kB figure of the line field (e.g. "VmHWM") of /proc/<pid>/status, pid 0 for
// the calling process; ok is false where the file or the line is missing or unreadable.
func KB(pid int, field string) (kb int64, ok bool) {
	who := "self"
	if pid != 0 {
		who = strconv.Itoa(pid)
	}
	raw, err := os.ReadFile("/proc/" + who + "/status")
	if err != nil {
		return 0, false
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if v, found := strings.CutPrefix(line, field+":"); found {
			n, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return n, err == nil
		}
	}
	return 0, false
}
