package files_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/gatehouse-dev/gatehouse/edge/edgetest/storetest"
	"github.com/gatehouse-dev/gatehouse/products/files"
)

// TestMain stops the private PostgreSQL server of GATEHOUSE_TEST_STORE=postgres after the tests.
// Started as `files.test variant-worker` (workerCommand), the test binary is a variant worker.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == "variant-worker" {
		if err := files.ServeVariantWorker(os.Args[2:]); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	storetest.Main(m)
}

// workerCommand starts this test binary as a variant worker (TestMain).
func workerCommand() []string { return []string{os.Args[0], "variant-worker"} }
