package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestNodeIDKeptPerDataFolder: a data folder keeps its node id across restarts (a restarted
// node takes its own leases back); another folder gets another id; a damaged file is an error.
func TestNodeIDKeptPerDataFolder(t *testing.T) {
	a, b := t.TempDir(), filepath.Join(t.TempDir(), "new")
	first, err := nodeID(a)
	if err != nil || first == "" {
		t.Fatalf("nodeID = %q, %v", first, err)
	}
	again, err := nodeID(a)
	if err != nil || again != first {
		t.Errorf("second nodeID = %q, %v; want %q", again, err, first)
	}
	other, err := nodeID(b)
	if err != nil || other == first {
		t.Errorf("another folder's nodeID = %q, %v", other, err)
	}
	if err := os.WriteFile(filepath.Join(a, nodeFile), []byte("a/b\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := nodeID(a); err == nil {
		t.Error("a damaged node-id file was accepted")
	}
}
