package records_test

import (
	"encoding/json"
	"errors"

	"github.com/gatehouse-dev/gatehouse/edge/apierr"
)

func jsonMarshal(v any) ([]byte, error) { return json.Marshal(v) }

func asAPI(err error) *apierr.Error {
	var e *apierr.Error
	if errors.As(err, &e) {
		return e
	}
	return nil
}
