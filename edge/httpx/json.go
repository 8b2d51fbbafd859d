package httpx

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"reflect"
	"strings"

	"github.com/gatehouse-dev/gatehouse/edge/apierr"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/gofiber/fiber/v2"
)

// The one strict reading of JSON request bodies. Every route that takes JSON reads its body
// through JSONBody (or DecodeJSON, which calls it): the Content-Type must be JSON, and the body
// must be exactly one I-JSON value (RFC 7493): valid UTF-8, no escaped lone surrogate, no
// object member name twice, nothing but whitespace after the value. encoding/json alone takes
// the last of two duplicate keys, turns invalid UTF-8 into U+FFFD and stops reading after the
// first value, so two readers could see two different bodies; jsontext (the syntax layer of
// encoding/json/v2) refuses all of these.

// ErrContentType is a body of a type other than JSON sent to a JSON route.
var ErrContentType = apierr.New(415, apierr.CodeUnsupportedContentType, "this route takes Content-Type: application/json", nil)

// IsJSONType reports whether a Content-Type header names JSON: application/json or an
// application/*+json type, with no charset or charset=utf-8. An absent header counts as JSON
// (many clients send none with a JSON body).
func IsJSONType(contentType string) bool {
	if strings.TrimSpace(contentType) == "" {
		return true
	}
	mt, params, err := mime.ParseMediaType(contentType)
	if err != nil {
		return false
	}
	if cs, ok := params["charset"]; ok && !strings.EqualFold(cs, "utf-8") {
		return false
	}
	return mt == fiber.MIMEApplicationJSON || (strings.HasPrefix(mt, "application/") && strings.HasSuffix(mt, "+json"))
}

// CheckJSON returns nil when body is exactly one strict JSON value (see the package comment of
// this file), or an error naming the first problem and where it is. The error text never holds
// Go type names.
func CheckJSON(body []byte) error {
	dec := jsontext.NewDecoder(bytes.NewReader(body))
	if _, err := dec.ReadValue(); err != nil {
		if errors.Is(err, io.EOF) {
			return errors.New("the body is empty")
		}
		return jsonSyntaxProblem(err)
	}
	if _, err := dec.ReadToken(); !errors.Is(err, io.EOF) {
		return fmt.Errorf("data after the JSON value at offset %d", dec.InputOffset())
	}
	return nil
}

// jsonSyntaxProblem renders a jsontext error as "duplicate key at /a/b (offset 12)".
func jsonSyntaxProblem(err error) error {
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

// JSONBody returns the body of a request to a route that takes JSON, after the checks every
// such route makes: 415 UNSUPPORTED_CONTENT_TYPE for another Content-Type, 400 with
// badJSONCode (INVALID_JSON for forms, VALIDATION_FAILED elsewhere) for a body CheckJSON
// refuses. The returned slice is fiber's: copy what outlives the handler.
func JSONBody(c *fiber.Ctx, badJSONCode string) ([]byte, error) {
	if err := JSONContentType(c); err != nil {
		return nil, err
	}
	body := c.Body()
	if err := StrictJSON(body, badJSONCode); err != nil {
		return nil, err
	}
	return body, nil
}

// JSONContentType refuses (415) a request whose Content-Type is not JSON (see IsJSONType).
// Routes that read their body as a stream call it, then StrictJSON on what they read.
func JSONContentType(c *fiber.Ctx) error {
	if !IsJSONType(c.Get(fiber.HeaderContentType)) {
		return ErrContentType
	}
	return nil
}

// StrictJSON is CheckJSON as an API error: 400 with badJSONCode (VALIDATION_FAILED carries
// the problem in its details too).
func StrictJSON(body []byte, badJSONCode string) error {
	problem := CheckJSON(body)
	if problem == nil {
		return nil
	}
	e := apierr.New(400, badJSONCode, "the body is not valid JSON: "+problem.Error(), problem)
	if badJSONCode == apierr.CodeValidationFailed {
		e.Details = []apierr.FieldProblem{{Field: "body", Problem: "is not valid JSON: " + problem.Error()}}
	}
	return e
}

// DecodeJSON reads the strict JSON body of c (JSONBody) into v with encoding/json. A value of
// the wrong type is 400 VALIDATION_FAILED naming the field and the JSON type it must have;
// the decoder's own text (with Go type names) stays the internal cause, never sent.
func DecodeJSON(c *fiber.Ctx, v any, badJSONCode string) error {
	body, err := JSONBody(c, badJSONCode)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(body, v); err != nil {
		return DecodeError(err)
	}
	return nil
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
		p.Problem = "must be " + JSONTypeName(te.Type)
	}
	e := apierr.Validation(p)
	e.Err = err
	return e
}

// JSONTypeName names the JSON type a Go type decodes from, for a caller: "a string",
// "an integer", "an object", ...
func JSONTypeName(t reflect.Type) string {
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
