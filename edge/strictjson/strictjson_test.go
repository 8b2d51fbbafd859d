package strictjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/gatehouse-dev/gatehouse/edge/apierr"
	jsonv2 "github.com/go-json-experiment/json"
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

// Decode answers as Check (400 with the bad-JSON code) then DecodeError would, keeps what v held when it refuses the body
// half-way, and takes what the one pass refuses but the two passes accept (names that differ
// in case only, which encoding/json merges).
func TestDecode(t *testing.T) {
	t.Parallel()
	type req struct {
		Name  string         `json:"name"`
		Max   int            `json:"max"`
		Extra map[string]any `json:"extra"`
	}
	for _, tc := range []struct {
		name, body, code string
		want             req
		field, problem   string // the detail of the error, when code is set
	}{
		{"ok", `{"name":"a","max":2,"extra":{"x":[1,"y"]}}`, "", req{Name: "a", Max: 2, Extra: map[string]any{"x": []any{1.0, "y"}}}, "", ""},
		{"case variants", `{"name":"a","Name":"b"}`, "", req{Name: "b", Max: 7}, "", ""},
		{"duplicate key", `{"name":"a","name":"b"}`, "INVALID_JSON", req{Max: 7}, "", ""},
		{"type error then syntax error", `{"max":"x",}`, "INVALID_JSON", req{Max: 7}, "", ""},
		{"type error", `{"name":"a","max":"x"}`, apierr.CodeValidationFailed, req{}, "max", "must be an integer"},
		{"fraction into an integer", `{"max":1.5}`, apierr.CodeValidationFailed, req{}, "max", "must be an integer"},
	} {
		v := req{Max: 7}
		err := Decode([]byte(tc.body), &v, "INVALID_JSON")
		if tc.code == "" {
			if err != nil || !reflect.DeepEqual(v, tc.want) {
				t.Errorf("%s: Decode = %+v, %v; want %+v", tc.name, v, err, tc.want)
			}
			continue
		}
		var e *apierr.Error
		if !errors.As(err, &e) || e.Status != 400 || e.Code != tc.code {
			t.Errorf("%s: Decode error %v, want 400 %s", tc.name, err, tc.code)
			continue
		}
		if tc.field != "" && (len(e.Details) != 1 || e.Details[0] != apierr.FieldProblem{Field: tc.field, Problem: tc.problem}) {
			t.Errorf("%s: details %+v, want %s %s", tc.name, e.Details, tc.field, tc.problem)
		}
		if tc.code == "INVALID_JSON" && !reflect.DeepEqual(v, tc.want) {
			t.Errorf("%s: v = %+v after a refused body, want %+v", tc.name, v, tc.want)
		}
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

// fuzzTarget has a field of each kind request bodies decode into, and of the kinds where
// encoding/json/v2 departs from encoding/json unless told otherwise (integers, durations,
// times, ",string", raw messages, names in another case).
type fuzzTarget struct {
	S       string            `json:"s"`
	CamelID string            `json:"camelId"`
	B       *bool             `json:"b"`
	F       float64           `json:"f"`
	I       int               `json:"i"`
	U       uint8             `json:"u"`
	Q       int64             `json:"q,string"`
	M       map[string]any    `json:"m"`
	MS      map[string]string `json:"ms"`
	L       []any             `json:"l"`
	LI      []int             `json:"li"`
	A       [2]string         `json:"a"`
	X       any               `json:"x"`
	T       time.Time         `json:"t"`
	D       time.Duration     `json:"d"`
	N       json.Number       `json:"n"`
	R       json.RawMessage   `json:"r"`
	P       *struct {
		Y string `json:"y,omitempty"`
	} `json:"p"`
	Untagged string
	Skipped  string `json:"-"`
}

// Unmarshal's one pass decodes a body only when Check and encoding/json both take it, into
// what encoding/json gives; what it refuses gets the two passes' answer.
func FuzzUnmarshalAgrees(f *testing.F) {
	for _, s := range []string{
		`{"s":"x","b":true,"f":1.5,"i":3,"u":255,"q":"7","m":{"a":[1,"b",null]},"ms":{"k":"v"}}`,
		`{"l":[1,{"a":2}],"li":[1,2],"a":["x","y","z"],"x":{"k":1e3},"t":"2026-11-28T01:02:03Z"}`,
		`{"d":1000,"n":12.5,"r":{"raw": [1, 2]},"p":{"y":"z"},"untagged":"u","Skipped":"no"}`,
		`{"S":"upper","CAMELID":"c","camel_id":"d","Camel-Id":"e"}`, `{"s":"a","S":"b"}`,
		`{"i":1.5}`, `{"i":1e2}`, `{"u":256}`, `{"q":7}`, `{"d":"1s"}`, `{"t":"2026-11-28"}`, `{"n":"abc"}`, `{"n":"12"}`, `{"r":"AAAA"}`,
		`{"m":null,"l":null,"p":null,"b":null}`, `{"s":"\ud800"}`, "{\"s\":\"\xff\"}",
		`{"s":"x","unknown":1}`, `{"m":{"big":12345678901234567890,"e":1e2,"neg":-0.5}}`, `[1,2.50,{"a":[3e0]}]`, `7`, `{"x":1.0}`,
		`{"s":"x"} x`, `[]`, `null`, `{"f":1e999}`, `{"\u212a":1}`, `{"ſ":"long s"}`, "",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, o := range []Options{{}, {UseNumber: true}, {DisallowUnknownFields: true}, {UseNumber: true, DisallowUnknownFields: true}} {
			agrees[fuzzTarget](t, body, o)
			agrees[any](t, body, o)
			agrees[map[string]json.RawMessage](t, body, o)
		}
	})
}

// agrees checks UnmarshalWith(body, *T, o) against the two passes: Check, then an
// encoding/json Decoder with o's settings.
func agrees[T any](t *testing.T, body []byte, o Options) {
	t.Helper()
	twoPasses := func(v *T) error {
		if err := Check(body); err != nil {
			return err
		}
		dec := json.NewDecoder(bytes.NewReader(body))
		if o.UseNumber {
			dec.UseNumber()
		}
		if o.DisallowUnknownFields {
			dec.DisallowUnknownFields()
		}
		return dec.Decode(v)
	}
	var one T
	if jsonv2.Unmarshal(body, &one, onePasses[o.index()]) != nil {
		var got, want T
		gotErr := UnmarshalWith(body, &got, o)
		wantErr := twoPasses(&want)
		if (gotErr == nil) != (wantErr == nil) || gotErr == nil && !reflect.DeepEqual(got, want) {
			t.Fatalf("UnmarshalWith(%q, %T, %+v) = %+v, %v; the two passes give %+v, %v", body, &got, o, got, gotErr, want, wantErr)
		}
		return
	}
	var two T
	if err := twoPasses(&two); err != nil {
		t.Fatalf("one pass (%+v) took %q into %T, which the two passes refuse: %v", o, body, &two, err)
	}
	if !reflect.DeepEqual(one, two) {
		t.Fatalf("one pass (%+v) read %q into %T as %#v, the two passes as %#v", o, body, &two, one, two)
	}
}
