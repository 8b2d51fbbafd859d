//go:build wasip1

// Command spamguard is a forms.submit filter: it rejects a submission whose
// text fields contain a blocked word or more links than allowed.
//
// Config: blockedWords (comma-separated, case-insensitive), maxLinks
// (default 2), rejectCode (default SPAM_DETECTED).
package main

import (
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

func init() {
	pdk.OnFormSubmit(func(s pdk.Submission) pdk.Verdict {
		load()
		links := 0
		var verdict pdk.Verdict
		done := false
		s.Data.Members(func(_ string, v pdk.Value) bool {
			if v.Kind() != pdk.String {
				return true
			}
			text := v.Text()
			for _, w := range blocked {
				if containsFold(text, w) {
					verdict, done = pdk.Reject(rejectCode, "the message contains a blocked word"), true
					return false
				}
			}
			links += strings.Count(text, "http://") + strings.Count(text, "https://")
			if links > maxLinks {
				verdict, done = pdk.Reject(rejectCode, "the message contains too many links"), true
				return false
			}
			return true
		})
		if done {
			return verdict
		}
		return pdk.Allow()
	})
}

// containsFold reports whether s contains word (already lower case),
// ignoring ASCII case, without allocating a lowered copy of s.
func containsFold(s string, word []byte) bool {
	n := len(word)
	for i := 0; i+n <= len(s); i++ {
		j := 0
		for ; j < n; j++ {
			c := s[i+j]
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			if c != word[j] {
				break
			}
		}
		if j == n {
			return true
		}
	}
	return false
}

func main() {}
