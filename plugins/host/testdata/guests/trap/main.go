//go:build wasip1

// Command trap panics (an index out of range) when the message is "trap".
package main

import "github.com/gatehouse-dev/gatehouse/plugins/pdk"

var table []int

func init() {
	pdk.OnFormSubmit(func(s pdk.Submission) pdk.Verdict {
		if s.Field("message").Text() == "trap" {
			_ = table[len(s.Form)+5]
		}
		return pdk.Allow()
	})
}

func main() {}
