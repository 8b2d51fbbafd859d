package records_test

import (
	"encoding/json"
	"errors"

	"github.com/gatehouse-dev/gatehouse/edge/httpx"
)

func jsonMarshal(v any) ([]byte, error) { return json.Marshal(v) }

func asAPI(err error) *httpx.Error {
	var e *httpx.Error
	if errors.As(err, &e) {
		return e
	}
	return nil
}
