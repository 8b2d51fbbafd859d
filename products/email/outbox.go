package email

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Outbox is the embedded default transport: each message becomes one .eml file (RFC 5322)
// under Dir, named after the message id, and is then delivered. Writing the same message again
// replaces its file, so a redelivery after a crash leaves one file.
type Outbox struct {
	Dir string
	Now func() time.Time
}

var (
	_ Transport = (*Outbox)(nil)
	_ Session   = (*Outbox)(nil)
)

// Name implements Transport.
func (o *Outbox) Name() string { return "outbox" }

// Session implements Transport: the outbox needs no per-goroutine state.
func (o *Outbox) Session() Session { return o }

// Close implements Session.
func (o *Outbox) Close() error { return nil }

// Path returns the .eml file of a message id.
func (o *Outbox) Path(id string) string { return filepath.Join(o.Dir, id+".eml") }

// Deliver implements Session.
func (o *Outbox) Deliver(_ context.Context, m *Message) Outcome {
	now := time.Now
	if o.Now != nil {
		now = o.Now
	}
	msg, err := Compose(m, now())
	if err != nil {
		return Outcome{Result: Fail, Detail: "compose: " + err.Error()}
	}
	if err := os.MkdirAll(o.Dir, 0o750); err != nil {
		return Outcome{Result: Retry, Detail: "outbox: " + err.Error()}
	}
	tmp, err := os.CreateTemp(o.Dir, ".tmp-*")
	if err != nil {
		return Outcome{Result: Retry, Detail: "outbox: " + err.Error()}
	}
	_, werr := msg.WriteTo(tmp)
	if werr == nil {
		werr = tmp.Sync()
	}
	if cerr := tmp.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(tmp.Name(), o.Path(m.ID))
	}
	if werr != nil {
		_ = os.Remove(tmp.Name())
		return Outcome{Result: Retry, Detail: "outbox: " + werr.Error()}
	}
	rel := strings.TrimPrefix(o.Path(m.ID), filepath.Dir(o.Dir)+string(filepath.Separator))
	return Outcome{Result: Delivered, Detail: fmt.Sprintf("written to %s", rel)}
}
