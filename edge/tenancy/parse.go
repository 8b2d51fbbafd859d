package tenancy

import (
	"errors"
	"fmt"
	"strings"

	"github.com/gatehouse-dev/gatehouse/edge/yamldoc"
)

// MaxDocumentBytes caps a tenants document; bulk record loads go through the import endpoint.
const MaxDocumentBytes = 32 << 20

// Problem is one invalid entry of a document, named by its path.
type Problem struct {
	Path    string `json:"path"`
	Message string `json:"problem"`
}

// String renders "orgs[0].projects[1].keys[2]: value must start with ...".
func (p Problem) String() string { return p.Path + ": " + p.Message }

// InvalidError lists every problem found in a document. Nothing of such a document is applied.
type InvalidError struct{ Problems []Problem }

// Error implements error with the first problems, one per line.
func (e *InvalidError) Error() string {
	var b strings.Builder
	b.WriteString("tenancy: invalid tenants document")
	for i, p := range e.Problems {
		if i == 10 {
			fmt.Fprintf(&b, "\n  ... and %d more", len(e.Problems)-10)
			break
		}
		b.WriteString("\n  ")
		b.WriteString(p.String())
	}
	return b.String()
}

// ErrTooLarge reports a document over MaxDocumentBytes.
var ErrTooLarge = errors.New("tenancy: tenants document too large")

// Parse reads a tenants document in YAML or JSON (JSON is YAML), refusing unknown keys, and
// validates it. The error is an *InvalidError naming the path of each bad entry.
func Parse(data []byte) (*Document, error) {
	if len(data) > MaxDocumentBytes {
		return nil, ErrTooLarge
	}
	var doc Document
	if err := yamldoc.Decode(data, &doc); err != nil {
		return nil, &InvalidError{Problems: []Problem{{Path: "document", Message: err.Error()}}}
	}
	if err := doc.Validate(); err != nil {
		return nil, err
	}
	return &doc, nil
}
