// Package strictjson is the one strict reading of JSON bodies: exactly one I-JSON value
// (RFC 7493): valid UTF-8, no escaped lone surrogate, no object member name twice, nothing but
// whitespace after the value. encoding/json alone takes the last of two duplicate keys, turns
// invalid UTF-8 into U+FFFD and stops reading after the first value, so two readers could see
// two different bodies; jsontext (the syntax layer of encoding/json/v2) refuses all of these.
// Its errors are API errors that never name Go types. It is free of HTTP: the handlers read
// request bodies through edge/httpx, which calls it, and services that read JSON themselves
// (the records NDJSON import) call it directly.
package strictjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"

	"github.com/gatehouse-dev/gatehouse/edge/apierr"
	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	jsonv1 "github.com/go-json-experiment/json/v1"
)

// Check returns nil when body is exactly one strict JSON value (see the package comment), or
// an error naming the first problem and where it is. The error text never holds Go type names.
func Check(body []byte) error {
	dec := jsontext.NewDecoder(bytes.NewReader(body))
	if _, err := dec.ReadValue(); err != nil {
		if errors.Is(err, io.EOF) {
			return errors.New("the body is empty")
		}
		return syntaxProblem(err)
	}
	if _, err := dec.ReadToken(); !errors.Is(err, io.EOF) {
		return fmt.Errorf("data after the JSON value at offset %d", dec.InputOffset())
	}
	return nil
}

// syntaxProblem renders a jsontext error as "duplicate key at /a/b (offset 12)".
func syntaxProblem(err error) error {
	var se *jsontext.SyntacticError
	if !errors.As(err, &se) {
		return errors.New("the body could not be read as JSON")
	}
	what := strings.TrimPrefix(se.Err.Error(), "jsontext: ")
	if errors.Is(err, jsontext.ErrDuplicateName) {
		what = "duplicate key"
	} else if strings.Contains(what, "invalid UTF-8") || strings.Contains(what, "surrogate") {
		what = "invalid UTF-8 or a lone surrogate escape"
	}
	if se.JSONPointer != "" {
		return fmt.Errorf("%s at %s (offset %d)", what, se.JSONPointer, se.ByteOffset)
	}
	return fmt.Errorf("%s at offset %d", what, se.ByteOffset)
}

// invalid is Check's problem as an API error: 400 with badJSONCode (VALIDATION_FAILED carries
// the problem in its details too).
func invalid(problem error, badJSONCode string) error {
	e := apierr.New(400, badJSONCode, "the body is not valid JSON: "+problem.Error(), problem)
	if badJSONCode == apierr.CodeValidationFailed {
		e.Details = []apierr.FieldProblem{{Field: "body", Problem: "is not valid JSON: " + problem.Error()}}
	}
	return e
}

// onePass reads JSON with encoding/json's semantics (encoding/json/v2's v1 options) and
// jsontext's strictness (no duplicate member names, no invalid UTF-8): one value, as Check
// reads it, decoded as encoding/json.Unmarshal decodes it. encoding/json's Number is a plain
// string to the v2 decoder, which would take "abc" for one: encoding/json reads those.
var onePass = onePassWith(Options{})

// Options are the encoding/json Decoder settings a route reads its body with.
type Options struct {
	// UseNumber decodes a number into an interface value as a json.Number, not a float64
	// (Decoder.UseNumber).
	UseNumber bool
	// DisallowUnknownFields refuses an object member no field of the destination struct takes
	// (Decoder.DisallowUnknownFields).
	DisallowUnknownFields bool
}

// onePasses holds onePassWith for each Options value (see index).
var onePasses = [4]jsonv2.Options{
	onePass,
	onePassWith(Options{UseNumber: true}),
	onePassWith(Options{DisallowUnknownFields: true}),
	onePassWith(Options{UseNumber: true, DisallowUnknownFields: true}),
}

func (o Options) index() int {
	i := 0
	if o.UseNumber {
		i |= 1
	}
	if o.DisallowUnknownFields {
		i |= 2
	}
	return i
}

// onePassWith is the one pass with o's settings. The v1 option behind Decoder.UseNumber is
// not exported: an unmarshaler of interface values reads a number as a json.Number and leaves
// every other value to the decoder (errors.ErrUnsupported).
func onePassWith(o Options) jsonv2.Options {
	un := []*jsonv2.Unmarshalers{jsonv2.UnmarshalFunc(func(b []byte, n *json.Number) error { return json.Unmarshal(b, n) })}
	if o.UseNumber {
		un = append(un, jsonv2.UnmarshalFromFunc(func(dec *jsontext.Decoder, v *any) error {
			if dec.PeekKind() != '0' {
				return errors.ErrUnsupported // the decoder reads it
			}
			tok, err := dec.ReadToken()
			if err != nil {
				return err
			}
			*v = json.Number(tok.String())
			return nil
		}))
	}
	return jsonv2.JoinOptions(jsonv1.DefaultOptionsV1(), jsontext.AllowDuplicateNames(false), jsontext.AllowInvalidUTF8(false),
		jsonv2.RejectUnknownMembers(o.DisallowUnknownFields), jsonv2.WithUnmarshalers(jsonv2.JoinUnmarshalers(un...)))
}

// InvalidError is a body Check refuses, as Unmarshal returns it.
type InvalidError struct{ Problem error }

func (e *InvalidError) Error() string { return e.Problem.Error() }

// Unmarshal is Check followed by encoding/json.Unmarshal of body into v (a non-nil pointer),
// made in one pass when both would accept the body: about half the time and a third of the
// allocations of the two passes, which every write of a record pays. A body the pass refuses
// is read again in the two passes, whose errors callers render: *InvalidError with Check's
// problem, or encoding/json's error (for DecodeError). FuzzUnmarshalAgrees checks that a body
// the pass takes gives Check's nil and the value encoding/json gives.
func Unmarshal(body []byte, v any) error { return UnmarshalWith(body, v, Options{}) }

// UnmarshalWith is Unmarshal decoding as an encoding/json Decoder with o's settings does.
func UnmarshalWith(body []byte, v any, o Options) error {
	rv := reflect.ValueOf(v)
	if rv.Kind() == reflect.Pointer && !rv.IsNil() {
		// Decoded into a copy of v: a body refused half-way leaves v's fields as they were for
		// the two passes (a map or slice v already held may have been written into, as
		// encoding/json writes into them).
		tmp := reflect.New(rv.Elem().Type())
		tmp.Elem().Set(rv.Elem())
		if jsonv2.Unmarshal(body, tmp.Interface(), onePasses[o.index()]) == nil {
			rv.Elem().Set(tmp.Elem())
			return nil
		}
	}
	if problem := Check(body); problem != nil {
		return &InvalidError{problem}
	}
	if o == (Options{}) {
		return json.Unmarshal(body, v)
	}
	// Check has seen exactly one value: the decoder's Decode reads what Unmarshal would.
	dec := json.NewDecoder(bytes.NewReader(body))
	if o.UseNumber {
		dec.UseNumber()
	}
	if o.DisallowUnknownFields {
		dec.DisallowUnknownFields()
	}
	return dec.Decode(v)
}

// Decode is Unmarshal with its errors as API errors: 400 with badJSONCode for a body Check refuses,
// DecodeError's for a value of the wrong type.
func Decode(body []byte, v any, badJSONCode string) error {
	return DecodeWith(body, v, Options{}, badJSONCode, nil)
}

// DecodeWith is Decode with o's settings, and decodeErr (DecodeError when nil) rendering an
// encoding/json error of a well-formed body, for routes whose errors name their own fields.
func DecodeWith(body []byte, v any, o Options, badJSONCode string, decodeErr func(error) error) error {
	err := UnmarshalWith(body, v, o)
	var ie *InvalidError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &ie):
		return invalid(ie.Problem, badJSONCode)
	case decodeErr != nil:
		return decodeErr(err)
	default:
		return DecodeError(err)
	}
}

// DecodeError turns an encoding/json decoding error of a well-formed body into 400
// VALIDATION_FAILED naming the field, without Go type names.
func DecodeError(err error) *apierr.Error {
	p := apierr.FieldProblem{Field: "body", Problem: "has a value of the wrong form"}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		if te.Field != "" {
			p.Field = te.Field
		}
		p.Problem = "must be " + TypeName(te.Type)
	}
	e := apierr.Validation(p)
	e.Err = err
	return e
}

// TypeName names the JSON type a Go type decodes from, for a caller: "a string",
// "an integer", "an object", ...
func TypeName(t reflect.Type) string {
	if t == nil {
		return "a JSON value"
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "a list"
	case reflect.Map, reflect.Struct:
		return "an object"
	}
	return "a JSON value of another type"
}
