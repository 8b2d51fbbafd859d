//go:build wasip1

// Command naivespam is spamguard written the naive way, decoding the whole
// input with encoding/json: the benchmark's point of comparison for the
// PDK's lazy field reads.
package main

import (
	"encoding/json"
	"strings"

	"github.com/gatehouse-dev/gatehouse/plugins/pdk"
)

func init() {
	pdk.OnFormSubmit(func(s pdk.Submission) pdk.Verdict {
		var data map[string]any
		if err := json.Unmarshal(s.Data.Raw(), &data); err != nil {
			return pdk.Reject("BAD_INPUT", err.Error())
		}
		words := strings.Split(pdk.ConfigOr("blockedWords", ""), ",")
		links := 0
		for _, v := range data {
			text, ok := v.(string)
			if !ok {
				continue
			}
			lower := strings.ToLower(text)
			for _, w := range words {
				if w != "" && strings.Contains(lower, w) {
					return pdk.Reject("SPAM_DETECTED", "blocked word")
				}
			}
			links += strings.Count(lower, "http://") + strings.Count(lower, "https://")
		}
		if links > 2 {
			return pdk.Reject("SPAM_DETECTED", "too many links")
		}
		return pdk.Allow()
	})
}

func main() {}
