package httpx

import (
	"errors"
	"log/slog"

	"github.com/gofiber/fiber/v2"
)

// errorBody is the flat error envelope of decisions.md section 2.
type errorBody struct {
	Error   string         `json:"error,omitempty"`
	Message string         `json:"message,omitempty"`
	Details []FieldProblem `json:"details,omitempty"`
}

// ErrorHandler returns the fiber ErrorHandler that renders every error as the envelope:
// {"error":"CODE","message":"..."}; 401 and 413 carry only a message. Unknown errors become
// 500 INTERNAL and are logged with their cause; no stack trace or cause reaches the body.
func ErrorHandler(log *slog.Logger) fiber.ErrorHandler {
	return func(c *fiber.Ctx, err error) error {
		e := fromFiber(err)
		if e.Status >= 500 {
			log.Error("request failed", "method", c.Method(), "path", c.Path(), "status", e.Status,
				"request_id", c.GetRespHeader(fiber.HeaderXRequestID), "err", err)
		}
		for k, v := range e.Header {
			c.Set(k, v)
		}
		if e.Status == fiber.StatusUnauthorized && c.GetRespHeader(fiber.HeaderWWWAuthenticate) == "" {
			c.Set(fiber.HeaderWWWAuthenticate, `ApiKey header="X-API-Key"`)
		}
		return c.Status(e.Status).JSON(errorBody{Error: e.Code, Message: e.Message, Details: e.Details})
	}
}

// fromFiber turns fiber's own errors (unknown route, body too large, bad method) into API errors.
func fromFiber(err error) *Error {
	var fe *fiber.Error
	if errors.As(err, &fe) {
		switch fe.Code {
		case fiber.StatusNotFound:
			return ErrNotFound
		case fiber.StatusRequestEntityTooLarge:
			return ErrTooLarge
		case fiber.StatusMethodNotAllowed:
			return New(405, "METHOD_NOT_ALLOWED", "method not allowed", err)
		}
		if fe.Code < 500 {
			return New(fe.Code, CodeValidationFailed, fe.Message, err)
		}
	}
	return As(err)
}
