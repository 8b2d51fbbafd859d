// Package apierr is the one typed API error: the public status, code and message of an answer,
// kept apart from the internal cause, and the codes every product shares. It knows nothing of
// HTTP servers, so services return its errors without importing fiber; edge/httpx renders them
// (the one mapper), and errors.Is matches them by status and code.
package apierr

import (
	"errors"
	"fmt"
)

// FieldProblem names one invalid input field in a VALIDATION_FAILED answer. Line is the line
// of the field in a YAML or JSON document the caller sent (tenants documents), when known.
type FieldProblem struct {
	Field   string `json:"field"`
	Problem string `json:"problem"`
	Line    int    `json:"line,omitempty"`
}

// Error is the one typed API error: the public status, code and message kept apart from the
// internal cause. Services return it (or wrap it); httpx.ErrorHandler renders it.
type Error struct {
	Status  int
	Code    string // empty for the interface's "dash" answers (401, 413)
	Message string
	Details []FieldProblem
	// Header holds extra response headers (Retry-After, WWW-Authenticate).
	Header map[string]string
	Err    error
}

// New returns an API error with a status, code and human message, wrapping cause (may be nil).
func New(status int, code, message string, cause error) *Error {
	return &Error{Status: status, Code: code, Message: message, Err: cause}
}

// Validation returns a 400 VALIDATION_FAILED error listing the bad fields.
func Validation(problems ...FieldProblem) *Error {
	msg := "the request is invalid"
	if len(problems) > 0 {
		msg = fmt.Sprintf("%s: %s", problems[0].Field, problems[0].Problem)
	}
	return &Error{Status: 400, Code: CodeValidationFailed, Message: msg, Details: problems}
}

// Error implements error.
func (e *Error) Error() string {
	s := fmt.Sprintf("%d %s: %s", e.Status, e.Code, e.Message)
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Unwrap returns the internal cause.
func (e *Error) Unwrap() error { return e.Err }

// Is matches another *Error with the same status and code, so sentinel API errors work with errors.Is.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Status == e.Status && t.Code == e.Code
}

// WithHeader returns a copy of e that also sets header k=v on the response.
func (e *Error) WithHeader(k, v string) *Error {
	c := *e
	c.Header = map[string]string{k: v}
	for hk, hv := range e.Header {
		if hk != k {
			c.Header[hk] = hv
		}
	}
	return &c
}

// Codes shared by every product (decisions.md section 2).
const (
	CodeValidationFailed = "VALIDATION_FAILED"
	CodeForbidden        = "FORBIDDEN"
	CodeNotFound         = "NOT_FOUND"
	CodeRateLimited      = "RATE_LIMITED"
	CodeInternal         = "INTERNAL"
	CodeInvalidCursor    = "INVALID_CURSOR"
	// Codes of requests refused by the HTTP layer before any route runs.
	CodeHeadersTooLarge = "HEADERS_TOO_LARGE" // 431
	CodeRequestTimeout  = "REQUEST_TIMEOUT"   // 408
	CodeBadRequest      = "BAD_REQUEST"       // any other 4xx of the HTTP layer
	// CodeUnsupportedContentType refuses a body whose Content-Type the route does not take (415).
	CodeUnsupportedContentType = "UNSUPPORTED_CONTENT_TYPE"
)

// Codes of the plugin hooks (decisions.md section 8), shared by the products that have hooks;
// each product declares the errors it answers with them in its errors.go.
const (
	// CodePluginFailed: a fail-closed plugin gave no verdict (trap, timeout, bad output).
	CodePluginFailed = "PLUGIN_FAILED"
	// CodePluginBusy: the project's plugins are over their CPU budget or their queue is full.
	CodePluginBusy = "PLUGIN_BUSY"
	// CodeRejectedByPlugin: a plugin refused the request without naming a code of its own.
	CodeRejectedByPlugin = "REJECTED_BY_PLUGIN"
)

// PluginRejected is a plugin's reject verdict as the caller sees it: 422 with the plugin's own
// code (CodeRejectedByPlugin when it gave none) and message.
func PluginRejected(code, message, plugin string) *Error {
	if code == "" {
		code = CodeRejectedByPlugin
	}
	if message == "" {
		message = fmt.Sprintf("refused by plugin %s", plugin)
	}
	return New(422, code, message, nil)
}

// Shared API errors.
var (
	// ErrNotFound is an unknown route.
	ErrNotFound = New(404, CodeNotFound, "no such route", nil)
	// ErrInternal hides every unexpected failure; the cause is logged, never sent.
	ErrInternal = New(500, CodeInternal, "internal error", nil)
	// ErrInvalidCursor is a forged, foreign or damaged cursor.
	ErrInvalidCursor = New(400, CodeInvalidCursor, "the cursor is not valid for this query", nil)
	// ErrTooLarge is a body over the route's limit (413 has no code in the interface).
	ErrTooLarge = New(413, "", "payload too large", nil)
	// ErrUnauthorized is a missing, malformed, unknown or revoked key (401 has no code).
	ErrUnauthorized = New(401, "", "a valid API key is required", nil)
)

// As returns the *Error in err's chain, or ErrInternal wrapping err when there is none.
func As(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return &Error{Status: ErrInternal.Status, Code: ErrInternal.Code, Message: ErrInternal.Message, Err: err}
}
