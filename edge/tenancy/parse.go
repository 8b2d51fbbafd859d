package tenancy

import (
	"errors"
	"fmt"
	"strings"

	"github.com/gatehouse-dev/gatehouse/edge/yamldoc"
)

// MaxDocumentBytes caps a tenants document; bulk record loads go through the import endpoint.
const MaxDocumentBytes = 32 << 20

// Problem is one invalid entry of a document, named by its path and, when the document was
// parsed from text, its line.
type Problem struct {
	Path    string `json:"path"`
	Message string `json:"problem"`
	Line    int    `json:"line,omitempty"`
}

// String renders "14: orgs[0].projects[1].keys[2]: value must start with ..." (no line when 0).
func (p Problem) String() string {
	if p.Line > 0 {
		return fmt.Sprintf("%d: %s: %s", p.Line, p.Path, p.Message)
	}
	return p.Path + ": " + p.Message
}

// InvalidError lists every problem found in a document. Nothing of such a document is applied.
type InvalidError struct {
	Problems []Problem
	// File, when set, prefixes each problem: "tenants.yaml:14: orgs[0].projcts: unknown key".
	File string
}

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
		if e.File != "" {
			b.WriteString(e.File + ":")
		}
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
	pos, err := yamldoc.Decode(data, &doc)
	if err != nil {
		inv := &InvalidError{}
		var de *yamldoc.Error
		if !errors.As(err, &de) {
			return nil, &InvalidError{Problems: []Problem{{Path: "document", Message: err.Error()}}}
		}
		for _, p := range de.Problems {
			if p.Path == "" {
				p.Path = "document"
			}
			inv.Problems = append(inv.Problems, Problem{Path: p.Path, Message: p.Message, Line: p.Line})
		}
		return nil, inv
	}
	if err := doc.Validate(); err != nil {
		var inv *InvalidError
		if errors.As(err, &inv) {
			for i := range inv.Problems {
				inv.Problems[i].Line = pos.Line(inv.Problems[i].Path)
			}
		}
		return nil, err
	}
	return &doc, nil
}
