package legacy_test

import (
	"testing"

	"github.com/gatehouse-dev/gatehouse/edge/edgetest/storetest"
)

// TestMain stops the private PostgreSQL server of GATEHOUSE_TEST_STORE=postgres after the tests.
func TestMain(m *testing.M) { storetest.Main(m) }
