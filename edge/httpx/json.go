package httpx

import (
	"mime"
	"strings"

	"github.com/gatehouse-dev/gatehouse/edge/apierr"
	"github.com/gatehouse-dev/gatehouse/edge/strictjson"
	"github.com/gofiber/fiber/v2"
)

// The one strict reading of JSON request bodies (edge/strictjson): every route that takes JSON
// reads its body through JSONBody or DecodeJSON, which make the same checks: the Content-Type
// must be JSON, and the body exactly one I-JSON value.

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

// JSONBody returns the body of a request to a route that takes JSON, after the checks every
// such route makes: 415 UNSUPPORTED_CONTENT_TYPE for another Content-Type, 400 with
// badJSONCode (INVALID_JSON for forms, VALIDATION_FAILED elsewhere) for a body strictjson.Check
// refuses. The returned slice is fiber's: copy what outlives the handler.
func JSONBody(c *fiber.Ctx, badJSONCode string) ([]byte, error) {
	if err := JSONContentType(c); err != nil {
		return nil, err
	}
	body := c.Body()
	if err := strictjson.Validate(body, badJSONCode); err != nil {
		return nil, err
	}
	return body, nil
}

// JSONContentType refuses (415) a request whose Content-Type is not JSON (see IsJSONType).
// Routes that read their body as a stream call it, then strictjson.Validate on what they read.
func JSONContentType(c *fiber.Ctx) error {
	if !IsJSONType(c.Get(fiber.HeaderContentType)) {
		return ErrContentType
	}
	return nil
}

// DecodeJSON reads the strict JSON body of c (JSONBody's checks) into v as encoding/json would,
// in one pass where it can (strictjson.Decode). A value of
// the wrong type is 400 VALIDATION_FAILED naming the field and the JSON type it must have;
// the decoder's own text (with Go type names) stays the internal cause, never sent.
func DecodeJSON(c *fiber.Ctx, v any, badJSONCode string) error {
	if err := JSONContentType(c); err != nil {
		return err
	}
	return strictjson.Decode(c.Body(), v, badJSONCode)
}
