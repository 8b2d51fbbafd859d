package forms

import "testing"

func TestClientIP(t *testing.T) {
	t.Parallel()
	ps := parseProxies([]string{"10.0.0.0/8", "127.0.0.1", "junk"})
	tests := []struct{ peer, xff, want string }{
		{"198.51.100.1", "203.0.113.7", "198.51.100.1"},             // untrusted peer: header ignored
		{"127.0.0.1", "", "127.0.0.1"},                              // trusted peer, no header
		{"127.0.0.1", "203.0.113.7", "203.0.113.7"},                 // one hop
		{"127.0.0.1", "1.2.3.4, 203.0.113.7", "203.0.113.7"},        // spoofed left entry ignored
		{"127.0.0.1", "203.0.113.7, 10.1.2.3", "203.0.113.7"},       // two trusted hops
		{"127.0.0.1", "10.1.2.3, 10.4.5.6", "10.1.2.3"},             // all trusted: the leftmost
		{"127.0.0.1", "garbage", "127.0.0.1"},                       // nothing valid
		{"127.0.0.1", "203.0.113.7, garbage, 10.1.2.3", "10.1.2.3"}, // stop at junk
		{"127.0.0.1", " 2001:db8::1 ", "2001:db8::1"},               // IPv6
		{"::ffff:127.0.0.1", "::ffff:203.0.113.9", "203.0.113.9"},   // mapped addresses
	}
	for _, tc := range tests {
		if got := ps.clientIP(tc.peer, tc.xff); got != tc.want {
			t.Errorf("clientIP(%q, %q) = %q, want %q", tc.peer, tc.xff, got, tc.want)
		}
	}
}
