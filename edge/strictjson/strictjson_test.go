package strictjson

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/gatehouse-dev/gatehouse/edge/apierr"
)

func TestCheck(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, body string
		want       string // "" when the body is accepted, else a part of the problem
	}{
		{"object", `{"a":1,"b":[true,null,"x"]}`, ""},
		{"surrounding whitespace", " \n{\"a\":1}\r\n\t", ""},
		{"surrogate pair", `{"a":"\ud83d\ude00"}`, ""},
		{"scalar", `"just a string"`, ""},
		{"duplicate key", `{"to":"a@x.test","to":"b@x.test"}`, "duplicate key at /to"},
		{"nested duplicate key", `{"data":{"email":"a","email":"b"}}`, "duplicate key at /data/email"},
		{"duplicate after escape", `{"a":1,"\u0061":2}`, "duplicate key"},
		{"trailing value", `{"a":1} {"a":2}`, "data after the JSON value"},
		{"trailing garbage", `{"a":1}x`, "data after the JSON value"},
		{"invalid utf-8", "{\"a\":\"\xff\xfe\"}", "invalid UTF-8"},
		{"invalid utf-8 in a key", "{\"\xc3\":1}", "invalid UTF-8"},
		{"lone high surrogate", `{"a":"\ud800"}`, "lone surrogate"},
		{"lone low surrogate", `{"a":"\udc00x"}`, "lone surrogate"},
		{"high surrogate then letter", `{"a":"\ud800\u0041"}`, "lone surrogate"},
		{"empty", ``, "empty"},
		{"truncated", `{"a":`, "unexpected EOF"},
		{"single quotes", `{'a':1}`, "invalid character"},
	} {
		err := Check([]byte(tc.body))
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("Check(%s) = %v, want nil", tc.name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("Check(%s) = %v, want a problem containing %q", tc.name, err, tc.want)
		}
	}
}

// A type error names the field and the JSON type, never the Go type.
func TestDecodeErrorHasNoGoTypeNames(t *testing.T) {
	t.Parallel()
	type keyRequest struct {
		Products []string `json:"products"`
		Limits   struct {
			Max int `json:"max"`
		} `json:"limits"`
	}
	for body, want := range map[string]apierr.FieldProblem{
		`{"products":"email"}`:      {Field: "products", Problem: "must be a list"},
		`{"limits":{"max":"many"}}`: {Field: "limits.max", Problem: "must be an integer"},
		`[1,2]`:                     {Field: "body", Problem: "must be an object"},
	} {
		var v keyRequest
		e := DecodeError(json.Unmarshal([]byte(body), &v))
		if e.Status != 400 || e.Code != apierr.CodeValidationFailed || len(e.Details) != 1 || e.Details[0] != want {
			t.Errorf("DecodeError(%s) = %d %s %+v, want %+v", body, e.Status, e.Code, e.Details, want)
		}
		if strings.Contains(e.Message, "keyRequest") || strings.Contains(e.Message, "[]string") {
			t.Errorf("DecodeError(%s) message %q names Go types", body, e.Message)
		}
	}
	if got := TypeName(reflect.TypeFor[*float64]()); got != "a number" {
		t.Errorf("TypeName(*float64) = %q", got)
	}
}

// FuzzCheck: whatever Check accepts is one value encoding/json reads whole, with valid
// UTF-8 strings and no object holding a name twice.
func FuzzCheck(f *testing.F) {
	for _, s := range []string{
		`{"a":1}`, `{"a":1,"a":2}`, `{"a":{"b":[1,{"c":"\ud83d\ude00"}]}}`, `{"a":"\ud800"}`,
		"{\"a\":\"\xff\"}", `{} {}`, `[1,2,3]`, `"x"`, `1e999`, ` null `, `{"a":1}x`, "",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		if Check(body) != nil {
			return
		}
		if !utf8.Valid(body) {
			t.Fatalf("accepted invalid UTF-8: %q", body)
		}
		if !json.Valid(body) {
			t.Fatalf("accepted what encoding/json refuses: %q", body)
		}
		dec := json.NewDecoder(strings.NewReader(string(body)))
		dec.UseNumber() // range is a semantic question: 1e999 is well-formed
		var v any
		if err := dec.Decode(&v); err != nil {
			t.Fatalf("accepted %q but Decode: %v", body, err)
		}
		checkNoReplacement(t, body, v)
	})
}

// checkNoReplacement fails when a decoded string holds U+FFFD that the body did not spell
// (a lone surrogate or invalid byte that encoding/json would have replaced).
func checkNoReplacement(t *testing.T, body []byte, v any) {
	switch x := v.(type) {
	case string:
		if strings.ContainsRune(x, utf8.RuneError) && !strings.Contains(string(body), "\ufffd") && !strings.Contains(strings.ToLower(string(body)), `\ufffd`) {
			t.Fatalf("accepted %q: decodes to a replacement character", body)
		}
	case []any:
		for _, e := range x {
			checkNoReplacement(t, body, e)
		}
	case map[string]any:
		for k, e := range x {
			checkNoReplacement(t, body, k)
			checkNoReplacement(t, body, e)
		}
	}
}
