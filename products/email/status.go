package email

import "fmt"

// allowed lists, for each target status, the statuses a message may move from. It is the whole
// status machine: queued → sent → delivered; bounced and spam from any non-terminal status
// (a complaint or a late bounce may follow delivery); suppressed and failed only before
// delivery. Nothing moves back to queued, and a terminal status never moves.
var allowed = map[Status][]Status{
	StatusSent:       {StatusQueued},
	StatusDelivered:  {StatusQueued, StatusSent},
	StatusBounced:    {StatusQueued, StatusSent, StatusDelivered},
	StatusSpam:       {StatusQueued, StatusSent, StatusDelivered},
	StatusSuppressed: {StatusQueued, StatusSent},
	StatusFailed:     {StatusQueued, StatusSent},
}

// CanMove reports whether a message in status from may move to status to.
func CanMove(from, to Status) bool {
	for _, f := range allowed[to] {
		if f == from {
			return true
		}
	}
	return false
}

// advance moves m to status to, appending the log entry (its Status and At are filled in):
// the one place a stored message changes status. A refused move is ErrInvalidTransition.
func advance(m *Message, to Status, e LogEntry, at string) error {
	if !CanMove(m.Status, to) {
		return fmt.Errorf("%w: %s to %s", ErrInvalidTransition, m.Status, to)
	}
	m.Status = to
	e.Status = to
	e.At = at
	if e.Event == "" {
		e.Event = string(to)
	}
	m.Log = append(m.Log, e)
	m.UpdatedAt = at
	return nil
}

// note appends a log entry that does not move the status (a deferred attempt).
func note(m *Message, e LogEntry, at string) {
	e.Status = m.Status
	e.At = at
	m.Log = append(m.Log, e)
	m.UpdatedAt = at
}
