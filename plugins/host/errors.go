package host

import "errors"

// Errors returned by the Host. A failed plugin call wraps ErrPluginFailed
// and one of the more precise causes below, so callers may test either.
var (
	ErrClosed              = errors.New("host: closed")
	ErrNotFound            = errors.New("host: plugin not found")
	ErrInvalidRegistration = errors.New("host: invalid registration")
	ErrInvalidModule       = errors.New("host: invalid module")

	ErrPluginFailed = errors.New("host: plugin failed")
	ErrTimeout      = errors.New("host: plugin timed out")
	ErrTrap         = errors.New("host: plugin trapped")
	ErrMemoryLimit  = errors.New("host: plugin exceeded its memory limit")
	ErrBadOutput    = errors.New("host: plugin output is invalid")
	ErrGuestError   = errors.New("host: plugin reported an error")
	ErrCircuitOpen  = errors.New("host: plugin circuit breaker is open")
	ErrPoolBusy     = errors.New("host: no plugin instance became free in time")
	ErrBusy         = errors.New("host: the project's plugins are over their CPU budget or queue")
	ErrRefused      = errors.New("host: plugin module missing or refused")
)
