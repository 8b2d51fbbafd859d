//go:build wasip1

// Command hog is a Go guest that allocates a large heap on every call and
// succeeds: config "mb" megabytes (default 96) of fresh slices, each
// written to, kept until the call returns.
package main

import (
	"strconv"

	"github.com/gatehouse-dev/gatehouse/plugins/pdk"
)

var hoard [][]byte

func init() {
	pdk.OnFormSubmit(func(s pdk.Submission) pdk.Verdict {
		mb, err := strconv.Atoi(pdk.ConfigOr("mb", "96"))
		if err != nil {
			mb = 96
		}
		for range mb {
			b := make([]byte, 1<<20)
			for i := 0; i < len(b); i += 4096 {
				b[i] = 1
			}
			hoard = append(hoard, b)
		}
		hoard = nil
		return pdk.Allow()
	})
}

func main() {}
