package email

import (
	"context"
	"fmt"
	"strings"
	"time"

	mail "github.com/wneessen/go-mail"
)

// Result is the kind of outcome of one delivery attempt.
type Result int

// The outcomes a transport reports.
const (
	// Delivered: the recipient's server (or the outbox) accepted the message.
	Delivered Result = iota
	// Bounce: a permanent refusal of the recipient (SMTP 5xx on RCPT or DATA), a hard bounce.
	Bounce
	// Retry: a temporary failure (SMTP 4xx, connection error); tried again after a backoff.
	Retry
	// Fail: a permanent failure that is not the recipient's (5xx on MAIL FROM, a bad message).
	Fail
)

// Outcome is what one delivery attempt gave: its result, the SMTP reply code when there was
// one, and a human detail for the delivery log.
type Outcome struct {
	Result Result
	Code   int
	Detail string
}

// Transport delivers messages. Each worker goroutine opens its own Session and reuses it (and
// its connection) for many messages.
type Transport interface {
	Session() Session
	// Name is "outbox" or "smtp", for logs and the delivery log.
	Name() string
}

// Session delivers messages one at a time; it is used by one goroutine.
type Session interface {
	Deliver(ctx context.Context, m *Message) Outcome
	Close() error
}

// Recoverer is a transport that a crash can leave with debris (the outbox's half-written
// temporary files); Worker.Start calls Recover before the first delivery.
type Recoverer interface {
	Recover() error
}

// MessageIDDomain is the right-hand side of generated Message-ID headers when the sender's
// address gives none.
const MessageIDDomain = "gatehouse.local"

// MessageID is the Message-ID header value of m (without angle brackets): the message id's
// ULID at the sender's domain. It depends only on the stored message, so every attempt of a
// message, before and after a restart, carries the same one and a receiver can recognise an
// at-least-once redelivery as a duplicate.
func MessageID(m *Message) string {
	domain := MessageIDDomain
	if _, d, ok := strings.Cut(m.From.Email, "@"); ok && d != "" {
		domain = d
		// An internationalized domain goes in its A-labels, as in the From header.
		if !isASCII(d) {
			if a, err := idnaProfile.ToASCII(d); err == nil && a != "" {
				domain = a
			} else {
				domain = MessageIDDomain
			}
		}
	}
	return strings.TrimPrefix(m.ID, idPrefix) + "@" + domain
}

// Compose builds the RFC 5322 message for m: From/To/Reply-To as encodeAddress writes them
// (the send checked them with it),
// Subject, Date, the Message-ID of MessageID (the same on every attempt), a text part and,
// when there is HTML, a multipart/alternative with both; tags and metadata as X- headers.
func Compose(m *Message, date time.Time) (*mail.Msg, error) {
	msg := mail.NewMsg(mail.WithNoDefaultUserAgent())
	from, p := encodeAddress(m.From)
	if p != nil {
		return nil, fmt.Errorf("from: %w", p)
	}
	msg.FromMailAddress(from)
	to, p := encodeAddress(m.To)
	if p != nil {
		return nil, fmt.Errorf("to: %w", p)
	}
	msg.ToMailAddress(to)
	if m.ReplyTo != nil {
		rt, p := encodeAddress(*m.ReplyTo)
		if p != nil {
			return nil, fmt.Errorf("replyTo: %w", p)
		}
		msg.ReplyToMailAddress(rt)
	}
	msg.Subject(m.Subject)
	msg.SetDateWithValue(date)
	msg.SetMessageIDWithValue(MessageID(m))
	msg.SetGenHeader("X-Gatehouse-Message-Id", m.ID)
	msg.SetGenHeader(mail.HeaderXMailer, "Gatehouse")
	if len(m.Tags) > 0 {
		msg.SetGenHeader("X-Gatehouse-Tags", strings.Join(m.Tags, ", "))
	}
	for k, v := range m.Metadata {
		msg.SetGenHeader(mail.Header("X-Gatehouse-Metadata-"+k), v)
	}
	text := m.Text
	if text == "" && m.HTML == "" {
		text = " "
	}
	switch {
	case m.HTML != "" && text != "":
		msg.SetBodyString(mail.TypeTextPlain, text)
		msg.AddAlternativeString(mail.TypeTextHTML, m.HTML)
	case m.HTML != "":
		msg.SetBodyString(mail.TypeTextHTML, m.HTML)
	default:
		msg.SetBodyString(mail.TypeTextPlain, text)
	}
	return msg, nil
}
