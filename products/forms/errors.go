package forms

import (
	"strconv"
	"time"

	"github.com/gatehouse-dev/gatehouse/edge/apierr"
)

// Error codes of the Forms error table (and the codes decisions.md adds).
const (
	CodeFormNotFound          = "FORM_NOT_FOUND"
	CodeFormPrivate           = "FORM_PRIVATE"
	CodeInvalidJSON           = "INVALID_JSON"
	CodeCaptchaRequired       = "CAPTCHA_REQUIRED"
	CodeCaptchaFailed         = "CAPTCHA_FAILED"
	CodeCaptchaNotConfigured  = "CAPTCHA_NOT_CONFIGURED"
	CodeCaptchaUnavailable    = "CAPTCHA_UNAVAILABLE"
	CodeSubmissionNotFound    = "SUBMISSION_NOT_FOUND"
	CodeSubmissionFileMissing = "FILE_NOT_FOUND"
	CodeStorageUnavailable    = "STORAGE_UNAVAILABLE"
)

// API errors of the product; each maps to one interface code.
var (
	// ErrFormNotFound is an unknown or unpublished form.
	ErrFormNotFound = apierr.New(404, CodeFormNotFound, "no published form matches the slug", nil)
	// ErrFormPrivate is a form whose visibility is private.
	ErrFormPrivate = apierr.New(403, CodeFormPrivate, "the form is private", nil)
	// ErrCaptchaRequired is a captcha form submitted without a token.
	ErrCaptchaRequired = apierr.New(400, CodeCaptchaRequired, "the form requires a captcha token under captcha-response", nil)
	// ErrCaptchaFailed is a token the verifier rejected.
	ErrCaptchaFailed = apierr.New(403, CodeCaptchaFailed, "the captcha token was rejected", nil)
	// ErrCaptchaNotConfigured is a captcha form in a project with no challenge keys.
	ErrCaptchaNotConfigured = apierr.New(503, CodeCaptchaNotConfigured, "the form requires a captcha but the project has no captcha keys", nil)
	// ErrCaptchaUnavailable is a verifier that could not give a verdict (provider down).
	ErrCaptchaUnavailable = apierr.New(502, CodeCaptchaUnavailable, "the captcha provider could not be reached; try again", nil)
	// ErrStorageUnavailable is a file part the blob store did not take (S3 down or refusing):
	// the submission is refused whole, nothing of it kept, and the client may send it again.
	ErrStorageUnavailable = apierr.New(503, CodeStorageUnavailable, "the file storage could not take the submission's files; try again", nil)
	// ErrSubmissionNotFound is an unknown submission or file in the inbox.
	ErrSubmissionNotFound = apierr.New(404, CodeSubmissionNotFound, "no submission with that id", nil)
)

// invalidJSON is a body that does not parse.
func invalidJSON(cause error) error {
	return apierr.New(400, CodeInvalidJSON, "the body is not valid JSON", cause)
}

// rateLimited is a 429 with Retry-After in whole seconds (at least 1).
func rateLimited(retry time.Duration) error {
	secs := int((retry + time.Second - 1) / time.Second)
	if secs < 1 {
		secs = 1
	}
	return apierr.New(429, apierr.CodeRateLimited, "submission rate limit exceeded: 60 per minute per key and form", nil).
		WithHeader("Retry-After", strconv.Itoa(secs))
}

// Errors of the product's plugin hook (forms.submit, captcha.verify); the plugin adapter the composition root gives the
// product returns them (a reject is apierr.PluginRejected).
var (
	// ErrPluginFailed is a fail-closed plugin that gave no verdict.
	ErrPluginFailed = apierr.New(503, apierr.CodePluginFailed, "a plugin of this project failed; try again", nil)
	// ErrPluginBusy is a fail-closed plugin not run: the project's plugins are over their CPU
	// budget (or their queue is full); the caller may retry shortly.
	ErrPluginBusy = apierr.New(503, apierr.CodePluginBusy, "this project's plugins are over their CPU budget; try again shortly", nil).WithHeader("Retry-After", "1")
)
