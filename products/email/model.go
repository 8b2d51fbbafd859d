package email

// Status is an email message's status (the interface's "States and transitions").
type Status string

// The statuses. Bounced, Spam, Suppressed and Failed are terminal.
const (
	StatusQueued     Status = "queued"
	StatusSent       Status = "sent"
	StatusDelivered  Status = "delivered"
	StatusBounced    Status = "bounced"
	StatusSpam       Status = "spam"
	StatusSuppressed Status = "suppressed"
	StatusFailed     Status = "failed"
)

// Message is a stored email message: what was sent, its status and its delivery log.
type Message struct {
	ID         string            `json:"id"`
	Org        string            `json:"org"`
	Project    string            `json:"project"`
	Status     Status            `json:"status"`
	To         Address           `json:"to"`
	From       Address           `json:"from"`
	ReplyTo    *Address          `json:"replyTo,omitempty"`
	Subject    string            `json:"subject"`
	HTML       string            `json:"bodyHtml,omitempty"`
	Text       string            `json:"bodyText,omitempty"`
	TemplateID string            `json:"templateId,omitempty"`
	Tags       []string          `json:"tags"`
	Metadata   map[string]string `json:"metadata"`
	// IdempotencyKey is the caller's Idempotency-Key header, when given.
	IdempotencyKey string `json:"idempotencyKey,omitempty"`
	CreatedAt      string `json:"createdAt"`
	UpdatedAt      string `json:"updatedAt"`
	// Attempts counts delivery attempts (claims by the worker).
	Attempts int `json:"attempts"`
	// Due is when the message's queue entry comes due (unix nanoseconds): its commit time, or
	// the next attempt after a retry. Zero while a worker holds it and once it left the queue.
	Due int64 `json:"due,omitempty"`
	// Log is the delivery log, oldest first.
	Log []LogEntry `json:"log"`
}

// LogEntry is one step of a message's delivery log: a status move or a retry.
type LogEntry struct {
	At     string `json:"at"`
	Event  string `json:"event"` // queued, sent, delivered, bounced, spam, suppressed, failed, deferred
	Status Status `json:"status"`
	// Code is the SMTP reply code, when there was one.
	Code   int    `json:"code,omitempty"`
	Detail string `json:"detail,omitempty"`
}

// Terminal reports whether s is a terminal status.
func (s Status) Terminal() bool {
	switch s {
	case StatusBounced, StatusSpam, StatusSuppressed, StatusFailed:
		return true
	}
	return false
}

// Valid reports whether s is one of the seven statuses.
func (s Status) Valid() bool {
	switch s {
	case StatusQueued, StatusSent, StatusDelivered, StatusBounced, StatusSpam, StatusSuppressed, StatusFailed:
		return true
	}
	return false
}

// SendRequest is the body of POST /notifications/send, decoded.
type SendRequest struct {
	To         *Address          `json:"to"`
	TemplateID string            `json:"templateId"`
	Subject    *string           `json:"subject"`
	BodyHTML   *string           `json:"bodyHtml"`
	BodyText   *string           `json:"bodyText"`
	From       *Address          `json:"from"`
	ReplyTo    *Address          `json:"replyTo"`
	Variables  map[string]any    `json:"variables"`
	Tags       []string          `json:"tags"`
	Metadata   map[string]string `json:"metadata"`
	ProjectID  string            `json:"projectId"`
}

// Caller is who sends: the authenticated key's org and project (empty for an org-only key).
type Caller struct {
	Org     string
	Project string
}

// Receipt is the answer to an accepted send.
type Receipt struct {
	ID     string `json:"id"`
	Status Status `json:"status"`
}

// Event is provider feedback that arrives out of band (POST /admin/v1/email/events).
type Event struct {
	MessageID string `json:"messageId"`
	Type      string `json:"type"` // delivered | bounce | complaint
	Detail    string `json:"detail"`
}
