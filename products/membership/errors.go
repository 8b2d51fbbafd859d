package membership

import (
	"errors"

	"github.com/gatehouse-dev/gatehouse/edge/apierr"
)

// ErrNoActiveConnection reports a project with no active sign-in connection (none configured,
// or none marked active).
var ErrNoActiveConnection = errors.New("membership: no active connection")

// ErrConnectionNotFound reports a connection name the project does not have (admin API).
var ErrConnectionNotFound = errors.New("membership: no such connection")

// CodeNoActiveConnection is the interface's code for ErrNoActiveConnection.
const CodeNoActiveConnection = "NO_ACTIVE_CONNECTION"

// apiError maps the service's errors to API errors: the one place codes are chosen.
func apiError(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, ErrNoActiveConnection):
		return apierr.New(404, CodeNoActiveConnection, "the project has no active sign-in connection", err)
	case errors.Is(err, ErrConnectionNotFound):
		return apierr.New(404, apierr.CodeNotFound, "the project has no connection of this name", err)
	default:
		return err
	}
}
