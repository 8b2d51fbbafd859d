package suggest

import "testing"

func TestNearest(t *testing.T) {
	known := []string{"listen", "storage", "public_url", "log_level", "data"}
	tests := []struct {
		name, in, want string
		ok             bool
	}{
		{"swapped letters", "lsiten", "listen", true},
		{"missing letter", "storag", "storage", true},
		{"case", "LOG_LEVEL", "log_level", true},
		{"one letter off in a short name", "dat", "data", true},
		{"far from everything", "zebra", "", false},
		{"empty", "", "", false},
	}
	for _, tc := range tests {
		got, ok := Nearest(tc.in, known)
		if got != tc.want || ok != tc.ok {
			t.Errorf("%s: Nearest(%q) = %q, %v; want %q, %v", tc.name, tc.in, got, ok, tc.want, tc.ok)
		}
	}
	if _, ok := Nearest("x", nil); ok {
		t.Error("Nearest with no known names found one")
	}
}

func TestDidYouMean(t *testing.T) {
	if got := DidYouMean("projcts", []string{"projects", "keys"}); got != ` (did you mean "projects"?)` {
		t.Errorf("DidYouMean(projcts) = %q", got)
	}
	if got := DidYouMean("zzz", []string{"projects"}); got != "" {
		t.Errorf("DidYouMean(zzz) = %q, want empty", got)
	}
}
