package edge

import (
	"errors"
	"io"
	"net"
	"os"

	"github.com/gofiber/fiber/v2"

	"github.com/gatehouse-dev/gatehouse/edge/apierr"
)

// ErrRequestTimeout answers a request whose client stopped sending its body before the
// server's read_timeout (decisions.md 9.1): 408 REQUEST_TIMEOUT, never 500 INTERNAL.
var ErrRequestTimeout = apierr.New(408, apierr.CodeRequestTimeout, "the request body was not received in time", nil)

// watchedBody is a request body stream that remembers whether a read ran into the
// connection's read deadline. Handlers read streamed bodies in many ways (c.Body(), which
// turns a read error into the body's text; io.Copy to storage; a line scanner): whatever the
// handler then answers, a body cut off by the deadline is answered 408 by bodyGuard.
type watchedBody struct {
	r        io.Reader
	timedOut bool
}

func (w *watchedBody) Read(p []byte) (int, error) {
	n, err := w.r.Read(p)
	if err != nil && err != io.EOF && isTimeout(err) {
		w.timedOut = true
	}
	return n, err
}

// isTimeout reports whether err is a read deadline passing (the connection's read timeout).
func isTimeout(err error) bool {
	var ne net.Error
	return errors.Is(err, os.ErrDeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout())
}

// watchBody puts a watchedBody in front of c's streamed request body (nil when the request
// has no body). fasthttp keeps the original stream for draining and release after the
// handler, so replacing the request's reader is safe.
func watchBody(c *fiber.Ctx) *watchedBody {
	stream := c.Context().RequestBodyStream()
	if stream == nil || c.Request().Header.ContentLength() == 0 {
		return nil
	}
	w := &watchedBody{r: stream}
	c.Request().SetBodyStream(w, c.Request().Header.ContentLength())
	return w
}

// bodyTimedOut turns the outcome of a handler whose body read hit the deadline into 408
// REQUEST_TIMEOUT with the connection closed (the rest of the body is not coming).
func bodyTimedOut(c *fiber.Ctx, w *watchedBody, err error) error {
	if w == nil || !w.timedOut {
		return err
	}
	c.Context().SetConnectionClose()
	// What the handler may have written (a 400 for a body that ended in the error's text,
	// a report of what was stored) is replaced by the error's envelope.
	c.Response().ResetBody()
	return ErrRequestTimeout
}
