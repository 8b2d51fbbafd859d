//go:build wasip1

// Command loop never returns when the message field is "loop".
package main

import "github.com/gatehouse-dev/gatehouse/plugins/pdk"

var sink int

func init() {
	pdk.OnFormSubmit(func(s pdk.Submission) pdk.Verdict {
		if s.Field("message").Text() == "loop" {
			for i := 0; ; i++ {
				sink = i
			}
		}
		return pdk.Allow()
	})
}

func main() {}
