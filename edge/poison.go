package edge

import (
	"unsafe"

	"github.com/gofiber/fiber/v2"
)

// poisonRequestMemory is a test aid (Options.PoisonRequestMemory): once a request is answered
// (the access log middleware inside it has rendered any error), it overwrites the request
// memory that fiber lends to handlers without copying (Immutable is false): the path and so
// every route parameter, the query values and the header values. A handler that kept any of it
// past its return (a cache key, a struct field, a goroutine) then sees '#' bytes at once,
// instead of intermittently under concurrent load.
func poisonRequestMemory(c *fiber.Ctx) error {
	if err := c.Next(); err != nil {
		return err
	}
	scribble(c.Path())
	c.Request().URI().QueryArgs().VisitAll(func(_, v []byte) { fill(v) })
	c.Request().Header.VisitAll(func(k, v []byte) {
		// The request's own framing stays readable: fasthttp still looks at it while it writes
		// the answer.
		switch string(k) {
		case fiber.HeaderConnection, fiber.HeaderHost, fiber.HeaderContentLength, fiber.HeaderTransferEncoding:
			return
		}
		fill(v)
	})
	return nil
}

// scribble overwrites the bytes behind s: fiber's unsafe strings view its reused buffers.
func scribble(s string) {
	if len(s) == 0 {
		return
	}
	fill(unsafe.Slice(unsafe.StringData(s), len(s)))
}

func fill(b []byte) {
	for i := range b {
		b[i] = '#'
	}
}
