//go:build wasip1

// Command noop allows every submission: the per-call overhead baseline.
package main

import "github.com/gatehouse-dev/gatehouse/plugins/pdk"

func init() {
	pdk.OnFormSubmit(func(pdk.Submission) pdk.Verdict { return pdk.Allow() })
}

func main() {}
