package records

import (
	"testing"
	"time"
)

func TestParseDate(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in   string
		want string // RFC 3339 in UTC; "" when refused
	}{
		{"2026-03-15", "2026-03-15T00:00:00Z"},
		{"2026-03-15T10:20:30Z", "2026-03-15T10:20:30Z"},
		{"2026-03-15T10:20:30.123+02:00", "2026-03-15T08:20:30.123Z"},
		{"2026-03-15T10:20:30", "2026-03-15T10:20:30Z"},
		{"2026-13-15", ""},
		{"2026-3-15", ""},
		{"15-03-2026", ""},
		{"2026-03-15T", ""},
		{"2026-03-15 10:20:30", ""},
		{"", ""},
		{"2026-03-1\xff", ""},
	} {
		got, ok := parseDate(c.in)
		if s := got.UTC().Format(time.RFC3339Nano); ok != (c.want != "") || ok && s != c.want {
			t.Errorf("parseDate(%q) = %s, %v; want %q", c.in, s, ok, c.want)
		}
	}
}
