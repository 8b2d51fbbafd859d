package certs

import (
	"testing"

	"github.com/gatehouse-dev/gatehouse/edge/edgetest/storetest"
)

// TestMain stops the private PostgreSQL server the tests on the postgres backend start.
func TestMain(m *testing.M) { storetest.Main(m) }
