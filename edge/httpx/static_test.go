package httpx

import "testing"

func TestAcceptsGzip(t *testing.T) {
	for in, want := range map[string]bool{"": false, "gzip": true, "br, gzip;q=0.5": true, "gzip;q=0": false, "deflate": false, "GZIP": true} {
		if got := AcceptsGzip(in); got != want {
			t.Errorf("AcceptsGzip(%q) = %v, want %v", in, got, want)
		}
	}
}
