// Package httpx holds what every HTTP route shares: the one mapper that renders apierr errors
// (and fiber's own) as the error envelope, the list envelope, the strict JSON body reader, body
// limits, request ids, access logs and panic recovery. Services do not import it: they return
// edge/apierr errors and sign pages with edge/cursor.
package httpx

import (
	"errors"
	"log/slog"

	"github.com/gatehouse-dev/gatehouse/edge/apierr"
	"github.com/gofiber/fiber/v2"
)

// errorBody is the flat error envelope of decisions.md section 2.
type errorBody struct {
	Error   string                `json:"error,omitempty"`
	Message string                `json:"message,omitempty"`
	Details []apierr.FieldProblem `json:"details,omitempty"`
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
func fromFiber(err error) *apierr.Error {
	var fe *fiber.Error
	if errors.As(err, &fe) {
		switch fe.Code {
		case fiber.StatusNotFound:
			return apierr.ErrNotFound
		case fiber.StatusRequestEntityTooLarge:
			return apierr.ErrTooLarge
		case fiber.StatusMethodNotAllowed:
			return apierr.New(405, "METHOD_NOT_ALLOWED", "method not allowed", err)
		case fiber.StatusBadRequest:
			// A request the HTTP layer could not parse: VALIDATION_FAILED keeps its details
			// (decisions.md section 2); the parser's own text stays the internal cause.
			e := apierr.Validation(apierr.FieldProblem{Field: "request", Problem: "is not a well-formed HTTP request"})
			e.Err = err
			return e
		case fiber.StatusRequestHeaderFieldsTooLarge:
			return apierr.New(fe.Code, apierr.CodeHeadersTooLarge, "the request headers are too large", err)
		case fiber.StatusRequestTimeout:
			return apierr.New(fe.Code, apierr.CodeRequestTimeout, "the request was not received in time", err)
		}
		if fe.Code < 500 {
			return apierr.New(fe.Code, apierr.CodeBadRequest, "the request was refused by the HTTP layer", err)
		}
	}
	return apierr.As(err)
}
