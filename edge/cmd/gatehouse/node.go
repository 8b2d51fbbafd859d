package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/gatehouse-dev/gatehouse/edge/store"
)

// nodeFile holds this node's id in its data folder.
const nodeFile = "node-id"

// nodeID returns the id this node goes by among the nodes that share a database: made once per
// data folder and kept there, so a node restarted on its folder (after a crash, SIGKILL
// included) recognises the email and webhook leases it held and takes them back at once,
// instead of leaving them to run out as another node's would.
func nodeID(data string) (string, error) {
	p := filepath.Join(data, nodeFile)
	raw, err := os.ReadFile(p)
	if err == nil {
		if id := strings.TrimSpace(string(raw)); id != "" && !strings.ContainsAny(id, "/ \t") {
			return id, nil
		}
		return "", fmt.Errorf("node id: %s holds no usable id; delete it to make a new one", p)
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("node id: %w", err)
	}
	if err := os.MkdirAll(data, 0o750); err != nil {
		return "", fmt.Errorf("node id: %w", err)
	}
	id := store.NewID()
	tmp := p + ".tmp"
	if err := os.WriteFile(tmp, []byte(id+"\n"), 0o600); err != nil {
		return "", fmt.Errorf("node id: %w", err)
	}
	if err := os.Rename(tmp, p); err != nil {
		return "", fmt.Errorf("node id: %w", err)
	}
	return id, nil
}
