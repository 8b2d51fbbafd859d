// Package suggest finds the known name nearest to a misspelled one, so that an unknown
// config key, tenants-document key or GATEHOUSE_* variable is reported with a "did you
// mean" instead of leaving the reader to compare spellings by eye.
package suggest

import (
	"strings"

	"github.com/agnivade/levenshtein"
)

// Nearest returns the name of known closest to name by edit distance (case-insensitive),
// and false when none is close enough to be a likely typo: at most a third of the longer
// name's letters may differ (and at least one may, so "lsiten" finds "listen").
func Nearest(name string, known []string) (string, bool) {
	best, bestDist := "", -1
	lower := strings.ToLower(name)
	for _, k := range known {
		d := levenshtein.ComputeDistance(lower, strings.ToLower(k))
		if bestDist < 0 || d < bestDist {
			best, bestDist = k, d
		}
	}
	if bestDist < 0 || bestDist > max(1, max(len(name), len(best))/3) {
		return "", false
	}
	return best, true
}

// DidYouMean returns ` (did you mean "x"?)` for the nearest known name, or "" when none is
// near: the suffix the callers append to their "unknown ..." messages.
func DidYouMean(name string, known []string) string {
	if k, ok := Nearest(name, known); ok {
		return ` (did you mean "` + k + `"?)`
	}
	return ""
}
