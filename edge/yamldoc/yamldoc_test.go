package yamldoc

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

type level int

// UnmarshalJSON reads "low" or "high", as a type with its own reading would.
func (l *level) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return errors.New("level must be low or high: " + err.Error())
	}
	if s != "low" && s != "high" {
		return errors.New("level must be low or high")
	}
	return nil
}

type item struct {
	Name  string            `json:"name"`
	Size  int               `json:"size,omitempty"`
	Ratio float64           `json:"ratio,omitempty"`
	On    bool              `json:"on,omitempty"`
	Tags  []string          `json:"tags,omitempty"`
	Conf  map[string]string `json:"conf,omitempty"`
	Level *level            `json:"level,omitempty"`
}

type doc struct {
	Answer string         `json:"answer"`
	Data   map[string]any `json:"data"`
	Items  []item         `json:"items"`
	Inner  *struct {
		Deep []item `json:"deep"`
	} `json:"inner"`
}

func TestDecode(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, in, want string
	}{
		{"yaml 1.2 keeps no a string", "answer: no\ndata: {n: off}", "no"},
		{"json is yaml", `{"answer":"yes"}`, "yes"},
		{"case-insensitive names as encoding/json", "Answer: hi", "hi"},
		{"null leaves a value", "answer: hi\ninner: null\nitems: ~", "hi"},
		{"anchors and merge keys", "answer: a\nbase: &b {name: x}\n", ""},
	} {
		var d doc
		_, err := Decode([]byte(tc.in), &d)
		if tc.name == "anchors and merge keys" {
			if err == nil || !strings.Contains(err.Error(), "2: base: unknown key") {
				t.Errorf("Decode(%s) = %v, want the unknown key base at line 2", tc.name, err)
			}
			continue
		}
		if err != nil || d.Answer != tc.want {
			t.Errorf("Decode(%s) = %+v, %v, want answer %q", tc.name, d, err, tc.want)
		}
	}
	var d doc
	if _, err := Decode([]byte("data: {n: off}"), &d); err != nil || d.Data["n"] != "off" {
		t.Errorf("map value off = %#v, %v, want the string off", d.Data["n"], err)
	}
	d = doc{}
	if _, err := Decode([]byte("items:\n  - &a {name: x, size: 2}\n  - <<: *a\n    name: y\n"), &d); err != nil || len(d.Items) != 2 || d.Items[1].Size != 2 || d.Items[1].Name != "y" {
		t.Errorf("merge key = %+v, %v", d.Items, err)
	}
}

// Every refusal names the line and path, and never carries encoding/json's text or a Go type.
func TestDecodeProblemsHaveLines(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, in, want string }{
		{"unknown key", "answer: x\nextra: 1", "2: extra: unknown key"},
		{"misspelled key", "answr: x", `1: answr: unknown key (did you mean "answer"?)`},
		{"nested unknown key", "items:\n  - name: a\n  - name: b\n    sise: 3\n", "4: items[1].sise: unknown key"},
		{"deep unknown key", "inner:\n  deep:\n    - {name: a, bogus: 1}\n", "3: inner.deep[0].bogus: unknown key"},
		{"string wanted", "answer: 12", "1: answer: must be a string"},
		{"date is not a string", "answer: 2026-01-02", "1: answer: must be a string"},
		{"integer wanted", "items: [{name: a, size: big}]", "1: items[0].size: must be an integer"},
		{"number wanted", "items: [{name: a, ratio: [1]}]", "1: items[0].ratio: must be a number"},
		{"boolean wanted", "items: [{name: a, on: \"yes\"}]", "1: items[0].on: must be a boolean"},
		{"list wanted", "items: {name: a}", "1: items: must be a list"},
		{"object wanted", "inner: 3", "1: inner: must be an object"},
		{"map value type", "items: [{name: a, conf: {k: [1]}}]", "1: items[0].conf.k: must be a string"},
		{"own reader", "items:\n  - {name: a, level: mid}", "2: items[0].level: level must be low or high"},
		{"own reader wraps json", "items:\n  - {name: a, level: {x: 1}}", "2: items[0].level: level must be low or high"},
		{"broken", "answer: [", "1: did not find expected node content"},
		{"duplicate key", "answer: a\nanswer: b", "2: mapping key \"answer\" already defined"},
		{"two documents", "answer: a\n---\nanswer: b\n", "2: a second document"},
		{"data after json", `{"answer":"a"} {"answer":"b"}`, "data after the document"},
		{"lone surrogate", `{"answer":"\ud800"}`, "invalid Unicode character escape"},
		{"invalid utf-8", "answer: \"\xff\"", "invalid leading UTF-8 octet"},
	} {
		var d doc
		_, err := Decode([]byte(tc.in), &d)
		var de *Error
		if !errors.As(err, &de) {
			t.Errorf("Decode(%s) err = %v (%T), want *Error", tc.name, err, err)
			continue
		}
		if !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Decode(%s) = %q, want it to contain %q", tc.name, err, tc.want)
		}
		for _, bad := range []string{"json:", "unknown field", "Go ", "yamldoc.", "main."} {
			if strings.Contains(err.Error(), bad) {
				t.Errorf("Decode(%s) = %q, carries %q", tc.name, err, bad)
			}
		}
	}
	de := &Error{File: "tenants.yaml", Problems: []Problem{{Line: 14, Path: "orgs[0].projcts", Message: "unknown key"}}}
	if de.Error() != "tenants.yaml:14: orgs[0].projcts: unknown key" {
		t.Errorf("Error() = %q", de.Error())
	}
}

func TestPositions(t *testing.T) {
	t.Parallel()
	var d doc
	pos, err := Decode([]byte("answer: x\nitems:\n  - name: a\n  - name: b\n    tags: [t]\n"), &d)
	if err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]int{"answer": 1, "items[1]": 4, "items[1].tags[0]": 5, "items[1].tags[7]": 5, "items[1].name.nope": 4, "elsewhere": 1} {
		if got := pos.Line(path); got != want {
			t.Errorf("Line(%q) = %d, want %d", path, got, want)
		}
	}
}

func TestEmptyDocumentSetsNothing(t *testing.T) {
	t.Parallel()
	d := doc{Answer: "kept"}
	if _, err := Decode([]byte("# only a comment\n"), &d); err != nil || d.Answer != "kept" {
		t.Errorf("Decode(comment only) = %+v, %v", d, err)
	}
}

func FuzzDecode(f *testing.F) {
	f.Add([]byte("answer: x\nitems: [{name: a, size: 2, tags: [a], conf: {k: v}, level: low}]"))
	f.Add([]byte(`{"answer":"a","data":{"x":[1,2,{"y":null}]}}`))
	f.Add([]byte("items:\n  - &a {name: x}\n  - <<: *a\n"))
	f.Add([]byte("answer: a\n---\nb: 1"))
	f.Fuzz(func(t *testing.T, in []byte) {
		var d doc
		_, err := Decode(in, &d)
		if err == nil {
			return
		}
		var de *Error
		if !errors.As(err, &de) {
			t.Fatalf("Decode error %T %v is not an *Error", err, err)
		}
		if strings.Contains(err.Error(), "json: ") {
			t.Fatalf("Decode error carries encoding/json text: %v", err)
		}
	})
}
