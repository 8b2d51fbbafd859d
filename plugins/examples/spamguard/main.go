//go:build wasip1

// Command spamguard is a forms.submit filter: it rejects a submission whose
// text fields contain a blocked word or more links than allowed.
//
// Config: blockedWords (comma-separated, case-insensitive), maxLinks
// (default 2), rejectCode (default SPAM_DETECTED).
package main

import (
	"bytes"
	"strings"

	"github.com/gatehouse-dev/gatehouse/plugins/pdk"
)

var (
	loaded     bool
	blocked    [][]byte
	maxLinks   int
	rejectCode string
)

func load() {
	if loaded {
		return
	}
	loaded = true
	for _, w := range strings.Split(pdk.ConfigOr("blockedWords", ""), ",") {
		if w = strings.TrimSpace(strings.ToLower(w)); w != "" {
			blocked = append(blocked, []byte(w))
		}
	}
	maxLinks = pdk.ConfigInt("maxLinks", 2)
	rejectCode = pdk.ConfigOr("rejectCode", "SPAM_DETECTED")
}

// lower is a reused buffer for the lower-cased text of one field.
var lower []byte

func init() {
	pdk.OnFormSubmit(func(s pdk.Submission) pdk.Verdict {
		load()
		links := 0
		reason := ""
		s.Data.Members(func(_ string, v pdk.Value) bool {
			if v.Kind() != pdk.String {
				return true
			}
			lower = appendLower(lower[:0], v.Text())
			for _, w := range blocked {
				if bytes.Contains(lower, w) {
					reason = "the message contains a blocked word"
					return false
				}
			}
			links += bytes.Count(lower, httpPrefix) + bytes.Count(lower, httpsPrefix)
			if links > maxLinks {
				reason = "the message contains too many links"
				return false
			}
			return true
		})
		if reason != "" {
			return pdk.Reject(rejectCode, reason)
		}
		return pdk.Allow()
	})
}

var httpPrefix, httpsPrefix = []byte("http://"), []byte("https://")

// appendLower appends s to dst with ASCII letters lowered, so that the
// blocked words are found with bytes.Contains over the lowered copy.
func appendLower(dst []byte, s string) []byte {
	dst = append(dst, s...)
	for i, c := range dst {
		if 'A' <= c && c <= 'Z' {
			dst[i] = c + 'a' - 'A'
		}
	}
	return dst
}

func main() {}
