package httpx

import (
	"log/slog"
	"strconv"
	"time"

	"github.com/gatehouse-dev/gatehouse/edge/apierr"
	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/utils"
)

// BodyLimit refuses a request whose declared or received body is longer than max bytes with 413.
func BodyLimit(max int) fiber.Handler {
	return func(c *fiber.Ctx) error {
		if c.Request().Header.ContentLength() > max || len(c.Request().Body()) > max {
			return apierr.ErrTooLarge
		}
		return c.Next()
	}
}

// RequestID gives every request an id (kept from a sane incoming X-Request-ID) and echoes it.
func RequestID() fiber.Handler {
	return func(c *fiber.Ctx) error {
		id := c.Get(fiber.HeaderXRequestID)
		if id == "" || len(id) > 128 {
			id = utils.UUIDv4()
		} else {
			id = utils.CopyString(id)
		}
		c.Set(fiber.HeaderXRequestID, id)
		c.Locals(requestIDKey{}, id)
		return c.Next()
	}
}

type requestIDKey struct{}

// RequestIDOf returns the id RequestID gave the request.
func RequestIDOf(c *fiber.Ctx) string {
	s, _ := c.Locals(requestIDKey{}).(string)
	return s
}

// AccessLog logs one structured line per request after the error handler has run.
// observe, when not nil, receives the route pattern, status and duration (for metrics).
func AccessLog(log *slog.Logger, observe func(c *fiber.Ctx, status int, d time.Duration)) fiber.Handler {
	return func(c *fiber.Ctx) error {
		start := time.Now()
		err := c.Next()
		if err != nil {
			if herr := c.App().ErrorHandler(c, err); herr != nil {
				_ = c.SendStatus(fiber.StatusInternalServerError)
			}
		}
		d := time.Since(start)
		status := c.Response().StatusCode()
		if observe != nil {
			observe(c, status, d)
		}
		log.LogAttrs(c.UserContext(), slog.LevelInfo, "request",
			slog.String("method", c.Method()),
			slog.String("path", c.Path()),
			slog.Int("status", status),
			slog.Duration("duration", d),
			slog.String("request_id", RequestIDOf(c)),
			slog.String("ip", c.IP()))
		return nil
	}
}

// Recover turns a panic in a later handler into 500 INTERNAL; the panic value and stack are
// logged, never sent.
func Recover(log *slog.Logger) fiber.Handler {
	return func(c *fiber.Ctx) (err error) {
		defer func() {
			if r := recover(); r != nil {
				log.Error("panic in handler", "path", c.Path(), "panic", r, "request_id", RequestIDOf(c))
				err = apierr.ErrInternal
			}
		}()
		return c.Next()
	}
}

// QueryInt reads an integer query parameter in [min,max], def when absent, VALIDATION_FAILED otherwise.
func QueryInt(c *fiber.Ctx, name string, def, min, max int) (int, error) {
	s := c.Query(name)
	if s == "" {
		return def, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < min || n > max {
		return 0, apierr.Validation(apierr.FieldProblem{Field: name, Problem: "must be an integer from " + strconv.Itoa(min) + " to " + strconv.Itoa(max)})
	}
	return n, nil
}
