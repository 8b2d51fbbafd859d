package email

import (
	"errors"

	"github.com/gatehouse-dev/gatehouse/edge/apierr"
)

// API errors of the product, each with its one interface code. Services return them (wrapped
// with %w where a cause helps the log); the fiber ErrorHandler renders them.
var (
	// ErrTemplateNotFound is a templateId the project does not have.
	ErrTemplateNotFound = apierr.New(404, "TEMPLATE_NOT_FOUND", "the project has no template with that templateId", nil)
	// ErrProjectNotFound is a projectId outside the key's org.
	ErrProjectNotFound = apierr.New(404, "PROJECT_NOT_FOUND", "no project with that projectId in the key's organization", nil)
	// ErrForbiddenProject is a projectId other than the project key's own.
	ErrForbiddenProject = apierr.New(403, apierr.CodeForbidden, "the key is not scoped for that project", nil)
	// ErrMessageNotFound is an unknown message id (admin routes).
	ErrMessageNotFound = apierr.New(404, "MESSAGE_NOT_FOUND", "no message with that id", nil)
	// ErrInvalidTransition is a status move the status machine refuses (a terminal message).
	ErrInvalidTransition = apierr.New(409, "INVALID_TRANSITION", "the message's status cannot move that way", nil)
	// ErrIdempotencyReused is an Idempotency-Key sent again within its window with a different
	// request: answering with the first message would hide that the second was never sent.
	ErrIdempotencyReused = apierr.New(409, "IDEMPOTENCY_KEY_REUSED", "this Idempotency-Key was used with a different request in the last 24 hours", nil)
	// ErrClosed is a send after the service was closed (shutdown).
	ErrClosed = apierr.New(503, "UNAVAILABLE", "the email service is shutting down", nil)
	// errNoOrg answers a suppression route of an org that does not exist.
	errNoOrg = apierr.New(404, apierr.CodeNotFound, "no such entity", nil)
)

// errInternal marks a failure inside the package that has no public code.
var errInternal = errors.New("email: internal error")

// invalid returns the 400 VALIDATION_FAILED error for one field.
func invalid(field, problem string) error {
	return apierr.Validation(apierr.FieldProblem{Field: field, Problem: problem})
}

// Errors of the product's plugin hook (email.send); the plugin adapter the composition root gives the
// product returns them (a reject is apierr.PluginRejected).
var (
	// ErrPluginFailed is a fail-closed plugin that gave no verdict.
	ErrPluginFailed = apierr.New(503, apierr.CodePluginFailed, "a plugin of this project failed; try again", nil)
	// ErrPluginBusy is a fail-closed plugin not run: the project's plugins are over their CPU
	// budget (or their queue is full); the caller may retry shortly.
	ErrPluginBusy = apierr.New(503, apierr.CodePluginBusy, "this project's plugins are over their CPU budget; try again shortly", nil).WithHeader("Retry-After", "1")
	// ErrRejected is a send a SendHook refused with an error that is not an *apierr.Error.
	ErrRejected = apierr.New(422, "SEND_REJECTED", "the send was refused by a filter", nil)
)
