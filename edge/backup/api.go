package backup

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/gatehouse-dev/gatehouse/edge/auth"
)

// API serves GET /admin/v1/backup (operator only): the archive of the running node, streamed.
type API struct {
	src Source
	log *slog.Logger
}

// APIOptions configures NewAPI.
type APIOptions struct {
	// Source opens the running node's snapshot (required).
	Source Source
	// Log receives the failures of a download under way (discarded when nil).
	Log *slog.Logger
}

// NewAPI returns the backup route over Options.Source.
func NewAPI(o APIOptions) *API {
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	return &API{src: o.Source, log: o.Log}
}

// MountAdmin registers the route under /admin/v1 (the token check is the server's).
func (a *API) MountAdmin(r fiber.Router) {
	r.Get("/backup", auth.OperatorOnly, a.download)
}

// streamIdle is how long the client may stop reading before the stream is cut off.
const streamIdle = 60 * time.Second

// deadlineWriter pushes the connection's write deadline forward while the archive streams:
// the server's write timeout bounds a whole answer, and a large archive takes longer than that.
type deadlineWriter struct {
	w      io.Writer
	conn   net.Conn
	pushed time.Time
}

func (d *deadlineWriter) Write(p []byte) (int, error) {
	if now := time.Now(); now.Sub(d.pushed) > time.Second {
		d.pushed = now
		_ = d.conn.SetWriteDeadline(now.Add(streamIdle))
	}
	return d.w.Write(p)
}

// download takes the database snapshot before answering (a failure there is a plain error
// answer), then streams the archive. A failure while streaming cuts the body short: the
// archive's gzip trailer is then missing, which `gatehouse backup` detects (Verify).
func (a *API) download(c *fiber.Ctx) error {
	s, err := Take(a.src)
	if err != nil {
		return err
	}
	c.Set(fiber.HeaderContentType, "application/gzip")
	c.Set(fiber.HeaderContentDisposition, fmt.Sprintf(`attachment; filename="gatehouse-%s.tar.gz"`, s.at.Format("20060102T150405Z")))
	conn := c.Context().Conn()
	c.Context().SetBodyStreamWriter(func(w *bufio.Writer) {
		defer s.Close()
		err := s.WriteTo(context.Background(), &deadlineWriter{w: w, conn: conn})
		if err == nil {
			err = w.Flush()
		}
		if err != nil {
			a.log.Error("backup: streaming the archive", "err", err)
		}
	})
	return nil
}
