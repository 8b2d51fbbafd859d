//go:build wasip1

// Command burner stays within its limits and keeps succeeding, at a cost:
// each call touches a 16 MB buffer and runs millions of iterations (config
// "iterations", default 2,000,000) before it allows the submission.
package main

import (
	"strconv"

	"github.com/gatehouse-dev/gatehouse/plugins/pdk"
)

var (
	buf  = make([]byte, 16<<20)
	sink uint32
)

func init() {
	pdk.OnFormSubmit(func(s pdk.Submission) pdk.Verdict {
		n, err := strconv.Atoi(pdk.ConfigOr("iterations", "2000000"))
		if err != nil {
			n = 2000000
		}
		x := sink
		for i := 0; i < n; i++ {
			x = x*1664525 + 1013904223
			buf[x&(16<<20-1)] = byte(x)
		}
		sink = x
		return pdk.Allow()
	})
}

func main() {}
