package email_test

import (
	"testing"

	"github.com/gatehouse-dev/gatehouse/edge/store/pgtest"
)

// TestMain stops the private PostgreSQL server the multi-node tests start (pgtest.URL).
func TestMain(m *testing.M) { pgtest.Main(m) }
