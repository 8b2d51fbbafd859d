package yamldoc

import (
	"strings"
	"testing"
)

func TestDecode(t *testing.T) {
	t.Parallel()
	type doc struct {
		Answer string         `json:"answer"`
		Data   map[string]any `json:"data"`
	}
	for _, tc := range []struct {
		name, in, want, err string
	}{
		{"yaml 1.2 keeps no a string", "answer: no\ndata: {n: off}", "no", ""},
		{"json is yaml", `{"answer":"yes"}`, "yes", ""},
		{"unknown key", "answer: x\nextra: 1", "", "unknown field"},
		{"broken", "answer: [", "", "yaml"},
	} {
		var d doc
		err := Decode([]byte(tc.in), &d)
		switch {
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("Decode(%s) err = %v, want %q", tc.name, err, tc.err)
		case tc.err == "" && (err != nil || d.Answer != tc.want):
			t.Errorf("Decode(%s) = %+v, %v, want answer %q", tc.name, d, err, tc.want)
		}
	}
	var d doc
	if err := Decode([]byte("data: {n: off}"), &d); err != nil || d.Data["n"] != "off" {
		t.Errorf("map value off = %#v, %v, want the string off", d.Data["n"], err)
	}
}
