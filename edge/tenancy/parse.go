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

// ErrTooManyChanges reports a document whose changes are more than one transaction of the
// store takes (about 15% of a memtable on badger: storage.memtable_mb); the document applies
// whole or not at all, so it must be applied in parts or with larger memtables.
var ErrTooManyChanges = errors.New("tenancy: the document's changes are more than one transaction takes")

// Parse reads a tenants document in YAML or JSON (JSON is YAML), refusing unknown keys of what
// tenancy owns, and validates orgs, projects and keys. The error is an *InvalidError naming the
// path and line of each bad entry. The products' sections are checked by Service.Parse and
// Service.Apply, which know them.
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
	doc.pos = pos
	if err := doc.Validate(); err != nil {
		return nil, doc.lines(err)
	}
	return &doc, nil
}

// Parse is the package's Parse followed by Validate with the registered sections: every
// problem of the document, the products' sections included, with its path and line.
func (s *Service) Parse(data []byte) (*Document, error) {
	doc, err := Parse(data)
	if err != nil {
		return nil, err
	}
	if err := s.Validate(doc); err != nil {
		return nil, err
	}
	doc.checkedBy = s
	return doc, nil
}

// lines puts the line of its entry on each problem of err (an *InvalidError or *RefusedError)
// that has none, when the document was parsed from text.
func (d *Document) lines(err error) error {
	if d.pos == nil {
		return err
	}
	var problems []Problem
	var inv *InvalidError
	var ref *RefusedError
	switch {
	case errors.As(err, &inv):
		problems = inv.Problems
	case errors.As(err, &ref):
		problems = ref.Problems
	}
	for i := range problems {
		if problems[i].Line == 0 {
			problems[i].Line = d.pos.Line(problems[i].Path)
		}
	}
	return err
}
