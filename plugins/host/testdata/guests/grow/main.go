//go:build wasip1

// Command grow keeps allocating when the message field is "grow".
package main

import "github.com/gatehouse-dev/gatehouse/plugins/pdk"

var hoard [][]byte

func init() {
	pdk.OnFormSubmit(func(s pdk.Submission) pdk.Verdict {
		if s.Field("message").Text() == "grow" {
			for {
				b := make([]byte, 1<<20)
				b[0] = 1
				hoard = append(hoard, b)
			}
		}
		return pdk.Allow()
	})
}

func main() {}
