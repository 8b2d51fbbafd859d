package tenancy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"
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
	if err := DecodeYAML(data, &doc); err != nil {
		return nil, &InvalidError{Problems: []Problem{{Path: "document", Message: err.Error()}}}
	}
	if err := doc.Validate(); err != nil {
		return nil, err
	}
	return &doc, nil
}

// DecodeYAML decodes YAML 1.2 (so JSON too) into v through its JSON form, refusing unknown keys.
// YAML 1.2 keeps `no`, `n` and `off` strings, so record data and option lists mean what they say.
func DecodeYAML(data []byte, v any) error {
	var tree any
	if err := yaml.Unmarshal(data, &tree); err != nil {
		return err
	}
	tree, err := jsonable(tree)
	if err != nil {
		return err
	}
	raw, err := json.Marshal(tree)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

// jsonable turns YAML's map[string]any / map[any]any trees into what encoding/json accepts.
func jsonable(v any) (any, error) {
	switch t := v.(type) {
	case map[string]any:
		for k, e := range t {
			c, err := jsonable(e)
			if err != nil {
				return nil, err
			}
			t[k] = c
		}
		return t, nil
	case map[any]any:
		m := make(map[string]any, len(t))
		for k, e := range t {
			c, err := jsonable(e)
			if err != nil {
				return nil, err
			}
			m[fmt.Sprint(k)] = c
		}
		return m, nil
	case []any:
		for i, e := range t {
			c, err := jsonable(e)
			if err != nil {
				return nil, err
			}
			t[i] = c
		}
		return t, nil
	}
	return v, nil
}
