package email

import (
	"context"
	"errors"
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
	_ Recoverer = (*Outbox)(nil)
)

// tmpPrefix names the temporary file a message is written to before its rename.
const tmpPrefix = ".tmp-"

// Recover implements Recoverer: it removes the temporary files a crash left in Dir between
// their creation and their rename (the message is still queued and is written again).
func (o *Outbox) Recover() error {
	stale, err := filepath.Glob(filepath.Join(o.Dir, tmpPrefix+"*"))
	if err != nil {
		return err
	}
	var errs []error
	for _, p := range stale {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

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
	tmp, err := os.CreateTemp(o.Dir, tmpPrefix+"*")
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
