package membership

import (
	"strings"
	"testing"
)

func TestNoneMatch(t *testing.T) {
	t.Parallel()
	const tag = `"abc"`
	cases := []struct {
		header string
		want   bool
	}{
		{``, false},
		{`"abc"`, true},
		{`W/"abc"`, true},
		{`"xyz"`, false},
		{`"xyz", "abc"`, true},
		{`"xyz",W/"abc"`, true},
		{` , ,"abc"`, true},
		{`*`, true},
		{`abc`, false},
		{`"ab`, false},
		{`garbage, "abc"`, true},
		{`"abc`, false},
		{`"ab,c"`, false},
		{`W/`, false},
	}
	for _, tc := range cases {
		if got := noneMatch(tc.header, tag); got != tc.want {
			t.Errorf("noneMatch(%q, %q) = %v, want %v", tc.header, tag, got, tc.want)
		}
	}
}

func TestEtagOfIsStableAndQuoted(t *testing.T) {
	t.Parallel()
	a, b := etagOf([]byte(`{"x":1}`)), etagOf([]byte(`{"x":2}`))
	if a != etagOf([]byte(`{"x":1}`)) || a == b {
		t.Errorf("etagOf is not a stable function of the body: %s %s", a, b)
	}
	if !strings.HasPrefix(a, `"`) || !strings.HasSuffix(a, `"`) || strings.Count(a, `"`) != 2 {
		t.Errorf("etagOf = %s, want one quoted strong tag", a)
	}
	if !noneMatch(a, a) {
		t.Errorf("noneMatch(%s, %s) = false", a, a)
	}
}

func FuzzNoneMatch(f *testing.F) {
	for _, s := range []string{``, `*`, `"abc"`, `W/"abc"`, `"x", "abc"`, `,,,`, `W/`, `"`, `"a" garbage "abc"`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, header string) {
		tag := `"abc"`
		got := noneMatch(header, tag)
		// Prepending the exact tag always matches; a header without the tag and without "*"
		// never does.
		if !noneMatch(tag+", "+header, tag) {
			t.Errorf("noneMatch(%q) with the tag first = false", tag+", "+header)
		}
		if got && !strings.Contains(header, tag) && !strings.Contains(header, "*") {
			t.Errorf("noneMatch(%q, %q) = true without the tag in the header", header, tag)
		}
	})
}
