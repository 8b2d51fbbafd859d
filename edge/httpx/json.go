package httpx

import (
	"mime"
	"strings"

	"github.com/gatehouse-dev/gatehouse/edge/apierr"
	"github.com/gatehouse-dev/gatehouse/edge/strictjson"
	"github.com/gofiber/fiber/v2"
)

// The one strict reading of JSON request bodies (edge/strictjson): every route that takes JSON
// reads its body through DecodeJSON or DecodeJSONWith, which make the same checks: the
// Content-Type must be JSON, and the body exactly one I-JSON value, read in one pass with the
// value (edge/strictjson).

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

// JSONContentType refuses (415) a request whose Content-Type is not JSON (see IsJSONType).
// Routes that read their body as a stream call it, then edge/strictjson on what they read.
func JSONContentType(c *fiber.Ctx) error {
	if !IsJSONType(c.Get(fiber.HeaderContentType)) {
		return ErrContentType
	}
	return nil
}

// DecodeJSON reads the strict JSON body of c into v as encoding/json would, in one pass where
// it can (strictjson.Decode): 415 UNSUPPORTED_CONTENT_TYPE for another Content-Type, 400 with
// badJSONCode (INVALID_JSON for forms, VALIDATION_FAILED elsewhere) for a body
// strictjson.Check refuses. A value of the wrong type is 400 VALIDATION_FAILED naming the field and the JSON type it must have;
// the decoder's own text (with Go type names) stays the internal cause, never sent.
func DecodeJSON(c *fiber.Ctx, v any, badJSONCode string) error {
	if err := JSONContentType(c); err != nil {
		return err
	}
	return strictjson.Decode(c.Body(), v, badJSONCode)
}

// DecodeJSONWith is DecodeJSON reading as an encoding/json Decoder with o's settings does
// (strictjson.DecodeWith); decodeErr renders a value of the wrong form when the route names
// its fields its own way (nil: DecodeJSON's errors).
func DecodeJSONWith(c *fiber.Ctx, v any, o strictjson.Options, badJSONCode string, decodeErr func(error) error) error {
	if err := JSONContentType(c); err != nil {
		return err
	}
	return strictjson.DecodeWith(c.Body(), v, o, badJSONCode, decodeErr)
}
