package pdk

import (
	"encoding/json"
	"fmt"
	"testing"
)

func TestValue(t *testing.T) {
	doc := ParseValue([]byte(` {"a": "x\"y\u00e9\ud83d\ude00", "n": -1.5e3, "i": 42, "b": true, "z": null,
		"o": {"k": [1, {"deep": "v"}]}, "e\u0073c": "keyed", "arr": [ "p", "q" ]} `))
	if doc.Kind() != Object {
		t.Fatalf("ParseValue kind = %v, want Object", doc.Kind())
	}
	if got, _ := doc.Get("a").AsString(); got != "x\"yé😀" {
		t.Errorf("Get(a) = %q", got)
	}
	if got, ok := doc.Get("n").AsFloat(); !ok || got != -1500 {
		t.Errorf("Get(n) = %v, %v", got, ok)
	}
	if got, ok := doc.Get("i").AsInt(); !ok || got != 42 {
		t.Errorf("Get(i) = %v, %v", got, ok)
	}
	if got, ok := doc.Get("b").AsBool(); !ok || !got {
		t.Errorf("Get(b) = %v, %v", got, ok)
	}
	if !doc.Get("z").IsNull() || doc.Get("missing").Exists() {
		t.Errorf("null or missing member misread")
	}
	var deep string
	doc.Get("o").Get("k").Elements(func(i int, v Value) bool {
		if i == 1 {
			deep = v.Get("deep").Text()
		}
		return true
	})
	if deep != "v" {
		t.Errorf("nested read = %q, want v", deep)
	}
	if doc.Get("esc").Text() != "keyed" {
		t.Errorf("escaped key not matched")
	}
	if n := doc.Get("arr").Len(); n != 2 {
		t.Errorf("Len(arr) = %d", n)
	}
	if n := doc.Len(); n != 8 {
		t.Errorf("Len(doc) = %d, want 8", n)
	}
}

func TestParseValueRejects(t *testing.T) {
	for _, in := range []string{``, `{`, `{"a":}`, `[1,]`, `"abc`, `{"a":1} x`, `tru`, "\"a\x01\"", `{"a" 1}`} {
		if v := ParseValue([]byte(in)); v.Exists() {
			t.Errorf("ParseValue(%q) = %q, want invalid", in, v.Raw())
		}
	}
}

func TestAppendString(t *testing.T) {
	for _, s := range []string{"plain", "q\"b\\s", "ctl\x01\n\t", "é😀", "bad\xffutf8", "<&>"} {
		got := AppendString(nil, s)
		var back string
		if err := json.Unmarshal(got, &back); err != nil {
			t.Errorf("AppendString(%q) = %s: not JSON: %v", s, got, err)
			continue
		}
		if want := string([]rune(s)); back != want && s != "bad\xffutf8" {
			t.Errorf("AppendString(%q) round-trips to %q", s, back)
		}
	}
}

func FuzzParseValue(f *testing.F) {
	for _, s := range []string{`{"a":[1,2,{"b":"c"}]}`, `"\ud83d\ude00"`, `[[[[]]]]`, `{"a":1,}`, `-0.5e+3`} {
		f.Add([]byte(s))
	}
	// The scanner trusts the host's JSON: it may accept slightly malformed
	// escapes or numbers, but it must never reject valid JSON or panic.
	f.Fuzz(func(t *testing.T, b []byte) {
		v := ParseValue(b)
		if json.Valid(b) && !v.Exists() {
			t.Fatalf("ParseValue rejected valid %q", b)
		}
		v.Members(func(string, Value) bool { return true })
		v.Elements(func(int, Value) bool { return true })
		_, _ = v.AsString()
		_ = v.Len()
	})
}

// A filter reads only the fields it needs, without decoding the document.
func ExampleValue_Get() {
	data := ParseValue([]byte(`{"email":"ada@example.test","message":"Hello","tags":["a","b"]}`))
	fmt.Println(data.Get("message").Text())
	fmt.Println(data.Get("tags").Len())
	fmt.Println(data.Get("phone").Exists())
	// Output:
	// Hello
	// 2
	// false
}
