package httpx

import (
	"testing"
)

func TestIsJSONType(t *testing.T) {
	t.Parallel()
	for ct, want := range map[string]bool{
		"":                                  true,
		"application/json":                  true,
		"Application/JSON; charset=UTF-8":   true,
		"application/merge-patch+json":      true,
		"application/json; charset=latin1":  false,
		"text/plain":                        false,
		"application/x-www-form-urlencoded": false,
		"multipart/form-data; boundary=x":   false,
		"application/json; =broken":         false,
	} {
		if got := IsJSONType(ct); got != want {
			t.Errorf("IsJSONType(%q) = %v, want %v", ct, got, want)
		}
	}
}
