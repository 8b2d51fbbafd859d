// Package yamldoc reads the operator's YAML documents (server config, tenants documents)
// strictly: YAML 1.2 (so JSON too, and `no`/`off` stay strings), through the JSON form so the
// same json struct tags serve both. It keeps the line of every node, so an unknown key, a value
// of the wrong type or a later validation problem is reported where it is:
// `tenants.yaml:14: orgs[0].projcts: unknown key`, never as encoding/json's text.
package yamldoc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/gatehouse-dev/gatehouse/edge/suggest"
)

// Problem is one problem of a document: its line (0 when unknown), the path of the entry
// (orgs[0].projects[1].keys[2]; empty for the whole document) and what is wrong.
type Problem struct {
	Line    int
	Path    string
	Message string
}

// String renders "14: orgs[0].projcts: unknown key".
func (p Problem) String() string {
	var b strings.Builder
	if p.Line > 0 {
		b.WriteString(strconv.Itoa(p.Line))
		b.WriteString(": ")
	}
	if p.Path != "" {
		b.WriteString(p.Path)
		b.WriteString(": ")
	}
	b.WriteString(p.Message)
	return b.String()
}

// Error lists the problems of a document; nothing of it was decoded into the target.
type Error struct {
	// File names the document in Error() ("tenants.yaml:14: ..."); empty leaves it out.
	File     string
	Problems []Problem
}

// Error implements error: one problem a line, each prefixed by the file when known.
func (e *Error) Error() string {
	lines := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		lines[i] = p.String()
		if e.File != "" {
			lines[i] = e.File + ":" + lines[i]
		}
	}
	return strings.Join(lines, "\n")
}

// Positions maps the path of every node of a decoded document to its line.
type Positions map[string]int

// Line returns the line of path, or of its nearest ancestor the document has (0 when none).
func (p Positions) Line(path string) int {
	for path != "" {
		if l, ok := p[path]; ok {
			return l
		}
		i := strings.LastIndexAny(path, ".[")
		if i < 0 {
			break
		}
		path = path[:i]
	}
	return p[""]
}

// Decode decodes one YAML 1.2 document (so JSON too) into v through its JSON form. Unknown
// keys, values of the wrong type, a second document or trailing data are refused with an
// *Error naming path and line. The Positions let callers put a line on their own problems.
func Decode(data []byte, v any) (Positions, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var root yaml.Node
	if err := dec.Decode(&root); err != nil {
		if errors.Is(err, io.EOF) {
			return Positions{}, nil // an empty document sets nothing
		}
		return nil, yamlError(err)
	}
	var next yaml.Node
	if err := dec.Decode(&next); !errors.Is(err, io.EOF) {
		e := &Error{Problems: []Problem{{Line: next.Line, Message: "a second document or data after the document; one document only"}}}
		if err != nil {
			e = yamlError(err)
			for i := range e.Problems {
				e.Problems[i].Message = "data after the document: " + e.Problems[i].Message
			}
		}
		return nil, e
	}
	w := walker{pos: Positions{}}
	body := &root
	if root.Kind == yaml.DocumentNode && len(root.Content) == 1 {
		body = root.Content[0]
	}
	w.pos[""] = body.Line
	w.walk(body, reflect.TypeOf(v), "")
	if len(w.problems) > 0 {
		return nil, &Error{Problems: w.problems}
	}
	var tree any
	if err := root.Decode(&tree); err != nil {
		return nil, yamlError(err)
	}
	tree, err := jsonable(tree)
	if err != nil {
		return nil, &Error{Problems: []Problem{{Message: err.Error()}}}
	}
	raw, err := json.Marshal(tree)
	if err != nil {
		return nil, &Error{Problems: []Problem{{Message: "the document has a value JSON cannot hold"}}}
	}
	jd := json.NewDecoder(bytes.NewReader(raw))
	jd.DisallowUnknownFields()
	if err := jd.Decode(v); err != nil {
		// The walk checks what encoding/json checks; this is a safety net that still never
		// shows its Go type names.
		p := Problem{Message: "the document does not have the expected form"}
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			p = Problem{Path: te.Field, Line: w.pos.Line(te.Field), Message: "must be " + typeName(te.Type)}
		}
		return nil, &Error{Problems: []Problem{p}}
	}
	return w.pos, nil
}

var yamlLine = regexp.MustCompile(`^(?:yaml: )?line (\d+): `)

// yamlError turns a YAML parse error into problems with their lines.
func yamlError(err error) *Error {
	var msgs []string
	var te *yaml.TypeError
	if errors.As(err, &te) {
		msgs = te.Errors
	} else {
		msgs = []string{err.Error()}
	}
	e := &Error{}
	for _, m := range msgs {
		p := Problem{Message: strings.TrimPrefix(m, "yaml: ")}
		if sm := yamlLine.FindStringSubmatch(m); sm != nil {
			p.Line, _ = strconv.Atoi(sm[1])
			p.Message = m[len(sm[0]):]
		}
		e.Problems = append(e.Problems, p)
	}
	return e
}

// walker checks a node tree against the Go type it will be decoded into, the way
// encoding/json would (json tags, case-insensitive names), recording each node's line.
type walker struct {
	pos      Positions
	problems []Problem
}

var unmarshalerType = reflect.TypeFor[json.Unmarshaler]()

func (w *walker) fail(n *yaml.Node, path, msg string) {
	w.problems = append(w.problems, Problem{Line: n.Line, Path: path, Message: msg})
}

func (w *walker) walk(n *yaml.Node, t reflect.Type, path string) {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	if path != "" {
		if _, seen := w.pos[path]; !seen {
			w.pos[path] = n.Line
		}
	}
	if t == nil || (n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null") {
		return // null leaves any value as it is
	}
	rest := hasRest(t)
	if !rest && (reflect.PointerTo(t).Implements(unmarshalerType) || t.Implements(unmarshalerType)) {
		w.custom(n, t, path)
		return
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Interface:
		return
	case reflect.Struct:
		if n.Kind != yaml.MappingNode {
			w.fail(n, path, "must be an object")
			return
		}
		fields := jsonFields(t)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, val := n.Content[i], n.Content[i+1]
			if k.Value == "<<" && k.ShortTag() == "!!merge" {
				w.walk(val, t, path)
				continue
			}
			f, ok := fields.lookup(k.Value)
			if !ok && rest {
				w.positions(k, val, join(path, k.Value))
				continue
			}
			if !ok {
				w.fail(k, join(path, k.Value), "unknown key"+suggest.DidYouMean(k.Value, fields.names()))
				continue
			}
			w.walk(val, f, join(path, k.Value))
		}
	case reflect.Map:
		if n.Kind != yaml.MappingNode {
			w.fail(n, path, "must be an object")
			return
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			w.walk(n.Content[i+1], t.Elem(), join(path, n.Content[i].Value))
		}
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			w.scalar(n, path, "!!str", "a string")
			return
		}
		if n.Kind != yaml.SequenceNode {
			w.fail(n, path, "must be a list")
			return
		}
		for i, e := range n.Content {
			w.walk(e, t.Elem(), fmt.Sprintf("%s[%d]", path, i))
		}
	case reflect.String:
		w.scalar(n, path, "!!str", "a string")
	case reflect.Bool:
		w.scalar(n, path, "!!bool", "a boolean (true or false)")
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		w.scalar(n, path, "!!int", "an integer")
	case reflect.Float32, reflect.Float64:
		if n.Kind == yaml.ScalarNode && n.ShortTag() == "!!int" {
			return
		}
		w.scalar(n, path, "!!float", "a number")
	}
}

// hasRest reports a struct (or pointer to one) with a field tagged `yamldoc:"rest"`: it keeps
// the keys it does not name for another reader (the products' sections of a tenants
// document), so the walk records their lines instead of refusing them, and the struct's own
// UnmarshalJSON fills that field.
func hasRest(t reflect.Type) bool {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return false
	}
	for i := 0; i < t.NumField(); i++ {
		if t.Field(i).Tag.Get("yamldoc") == "rest" {
			return true
		}
	}
	return false
}

// positions records the line of key k at path and of every node below its value n.
func (w *walker) positions(k, n *yaml.Node, path string) {
	if _, seen := w.pos[path]; !seen {
		w.pos[path] = k.Line
	}
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			w.positions(n.Content[i], n.Content[i+1], join(path, n.Content[i].Value))
		}
	case yaml.SequenceNode:
		for i, e := range n.Content {
			w.positions(e, e, fmt.Sprintf("%s[%d]", path, i))
		}
	}
}

// scalar checks that n is a scalar with tag.
func (w *walker) scalar(n *yaml.Node, path, tag, want string) {
	if n.Kind != yaml.ScalarNode || n.ShortTag() != tag {
		w.fail(n, path, "must be "+want)
	}
}

// custom checks a subtree whose type reads itself (json.Unmarshaler) by letting it read the
// subtree's JSON form; its error text is kept up to any encoding/json text it wraps.
func (w *walker) custom(n *yaml.Node, t reflect.Type, path string) {
	var tree any
	if err := n.Decode(&tree); err != nil {
		return // reported by the whole-document decode
	}
	tree, err := jsonable(tree)
	if err != nil {
		return
	}
	raw, err := json.Marshal(tree)
	if err != nil {
		return
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	u, ok := reflect.New(t).Interface().(json.Unmarshaler)
	if !ok {
		return
	}
	if err := u.UnmarshalJSON(raw); err != nil {
		msg := err.Error()
		if i := strings.Index(msg, "json: "); i >= 0 {
			msg = strings.TrimRight(msg[:i], ": ")
		}
		if msg == "" {
			msg = "has a value of the wrong form"
		}
		w.fail(n, path, msg)
	}
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// fieldSet is the JSON names of a struct's fields (embedded structs flattened).
type fieldSet map[string]reflect.Type

// lookup finds a field by its exact name, then case-insensitively as encoding/json does.
func (fs fieldSet) lookup(name string) (reflect.Type, bool) {
	if t, ok := fs[name]; ok {
		return t, true
	}
	for n, t := range fs {
		if strings.EqualFold(n, name) {
			return t, true
		}
	}
	return nil, false
}

// names lists the fields' names in order, for a "did you mean" on an unknown key.
func (fs fieldSet) names() []string {
	return slices.Sorted(maps.Keys(fs))
}

func jsonFields(t reflect.Type) fieldSet {
	fs := fieldSet{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			et := f.Type
			if et.Kind() == reflect.Pointer {
				et = et.Elem()
			}
			if et.Kind() == reflect.Struct {
				for n, ft := range jsonFields(et) {
					if _, dup := fs[n]; !dup {
						fs[n] = ft
					}
				}
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		fs[name] = f.Type
	}
	return fs
}

// typeName names the JSON type a Go type decodes from, for a reader of the document.
func typeName(t reflect.Type) string {
	if t == nil {
		return "another type"
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean (true or false)"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "a list"
	case reflect.Map, reflect.Struct:
		return "an object"
	}
	return "another type"
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
